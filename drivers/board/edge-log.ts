// The edges a board saw on its digital interrupts, numbered, kept in a bounded buffer so that readers in
// other threads (the incremental encoder) can poll them with a cursor instead of receiving callbacks.
import type { InterruptEdge, InterruptEdges } from '../../plugins/apis/board.js';

export class EdgeLog {
  private edges: InterruptEdge[] = [];
  private seq = 0;

  constructor(private readonly capacity = 1 << 16) {}

  record(interrupt: string, high: boolean): void {
    this.edges.push({ interrupt, high, seq: ++this.seq });
    // Trim in chunks so that recording stays O(1) amortised.
    if (this.edges.length >= this.capacity * 2) this.edges = this.edges.slice(this.edges.length - this.capacity);
  }

  /** Edges of `interrupts` after `after`; a negative `after` means "from now on": only the cursor. */
  since(interrupts: string[], after: number, levels: Record<string, boolean>): InterruptEdges {
    if (after < 0) return { cursor: this.seq, edges: [], levels, lost: false };
    const oldest = this.edges[0]?.seq ?? this.seq + 1;
    const wanted = new Set(interrupts);
    const edges: InterruptEdge[] = [];
    // Binary search for the first edge after the cursor.
    let lo = 0;
    let hi = this.edges.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.edges[mid]!.seq <= after) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.edges.length; i++) if (wanted.has(this.edges[i]!.interrupt)) edges.push(this.edges[i]!);
    return { cursor: this.seq, edges, levels, lost: after + 1 < oldest && after < this.seq };
  }
}
