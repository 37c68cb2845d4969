// The bounded, durable queue of log lines waiting to be shipped to the cloud. Lines are gathered in
// memory for at most FLUSH_MS (or SEGMENT_LINES lines), then written as one segment file (temp file,
// fsync, rename), and a segment is deleted only after the cloud acknowledged it. So a cloud outage, or
// a runtime restart during one, loses nothing until the cap; a crash loses at most the last FLUSH_MS.
// Past the cap the oldest segments are dropped, and the number of lines dropped is reported.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurable } from '../serving/durable-file.js';

export const DEFAULT_MAX_LINES = 100_000;
export const SEGMENT_LINES = 2000;
export const FLUSH_MS = 250;

/** One queued line, as stored: compact keys, time in ms. */
export interface QueuedLine {
  t: number;
  l: string;
  n: string;
  m: string;
  f?: Record<string, unknown>;
}

interface Segment {
  seq: number;
  lines: QueuedLine[];
  written: boolean;
  inFlight: boolean;
}

const segmentName = (seq: number) => `seg-${String(seq).padStart(12, '0')}.jsonl`;

export class LogQueue {
  private readonly segments: Segment[] = [];
  private buffer: QueuedLine[] = [];
  private nextSeq = 1;
  private flushTimer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private readonly waiters: (() => void)[] = [];
  /** Lines dropped since the last report. */
  private droppedUnreported = 0;

  constructor(
    readonly dir: string,
    readonly maxLines = DEFAULT_MAX_LINES,
    /** Told (asynchronously) how many lines were just dropped; it logs them, which queues one more line. */
    private readonly onDrop: (dropped: number) => void = () => undefined,
  ) {
    mkdirSync(dir, { recursive: true });
    // Segments a previous run could not ship are shipped first.
    for (const name of readdirSync(dir)
      .filter((n) => /^seg-\d+\.jsonl$/.test(n))
      .sort()) {
      const seq = Number(name.slice(4, 16));
      const lines = readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as QueuedLine];
          } catch {
            return []; // a torn last line of a segment written by an older format; nothing to ship
          }
        });
      this.segments.push({ seq, lines, written: true, inFlight: false });
      this.nextSeq = Math.max(this.nextSeq, seq + 1);
    }
  }

  /** Lines queued, written or not. */
  get size(): number {
    return this.segments.reduce((n, s) => n + s.lines.length, 0) + this.buffer.length;
  }

  push(line: QueuedLine): void {
    this.buffer.push(line);
    if (this.buffer.length >= SEGMENT_LINES) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Writes the buffered lines as a segment now. Resolves when every segment so far is on disk. */
  flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.buffer.length > 0) {
      const segment: Segment = { seq: this.nextSeq++, lines: this.buffer, written: false, inFlight: false };
      this.buffer = [];
      this.segments.push(segment);
      this.enforceCap();
      const text = `${segment.lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
      this.writing = this.writing
        .then(() => (this.segments.includes(segment) ? writeFileDurable(join(this.dir, segmentName(segment.seq)), text) : undefined))
        .then(() => {
          segment.written = true;
          this.notify();
        })
        .catch(() => {
          // The disk refused (full, read-only): the lines still ship from memory.
          segment.written = true;
          this.notify();
        });
    }
    return this.writing;
  }

  private enforceCap(): void {
    let size = this.size;
    let dropped = 0;
    while (size > this.maxLines) {
      const oldest = this.segments.find((s) => !s.inFlight);
      if (!oldest || oldest === this.segments[this.segments.length - 1]) break;
      this.segments.splice(this.segments.indexOf(oldest), 1);
      void rm(join(this.dir, segmentName(oldest.seq)), { force: true });
      size -= oldest.lines.length;
      dropped += oldest.lines.length;
    }
    if (dropped > 0) {
      this.droppedUnreported += dropped;
      // Not from inside push(): the report is itself a log line that comes back here.
      setImmediate(() => {
        const n = this.droppedUnreported;
        this.droppedUnreported = 0;
        if (n > 0) this.onDrop(n);
      });
    }
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The oldest written segments not yet in flight, up to maxLines lines (at least one segment). */
  take(maxLines: number): { seqs: number[]; lines: QueuedLine[] } | undefined {
    const seqs: number[] = [];
    const lines: QueuedLine[] = [];
    for (const s of this.segments) {
      if (s.inFlight) continue;
      if (!s.written) break;
      if (seqs.length && lines.length + s.lines.length > maxLines) break;
      s.inFlight = true;
      seqs.push(s.seq);
      lines.push(...s.lines);
    }
    return seqs.length ? { seqs, lines } : undefined;
  }

  /** Waits until take() may have something (or the timeout). */
  ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** The cloud stored these: forget them. */
  async ack(seqs: number[]): Promise<void> {
    for (const seq of seqs) {
      const i = this.segments.findIndex((s) => s.seq === seq);
      if (i >= 0) this.segments.splice(i, 1);
    }
    await this.writing;
    await Promise.all(seqs.map((seq) => rm(join(this.dir, segmentName(seq)), { force: true })));
  }

  /** Shipping failed: they go again later. */
  release(seqs: number[]): void {
    for (const s of this.segments) if (seqs.includes(s.seq)) s.inFlight = false;
  }

  close(): Promise<void> {
    const done = this.flush();
    this.notify();
    return done;
  }
}
