// The query node's local copies of sealed readings segments (issue 33's scale-out mode). DuckDB here
// cannot read s3:// (no httpfs offline), so a query's segments are fetched from the blob store into
// this folder first, named by their content hash: a segment never changes, so a file of that name is
// the segment, for every query and organization that needs it, until it is evicted.
//
// The folder's size is bounded: after a fetch, the least recently used files that no running query
// holds are removed until the total is under maxBytes again (a query's own segments may take it over
// the bound while it runs). A fetched object is checked against its hash before it is used; one that
// does not match is an error, never data.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '../../store/blob-store.js';

export interface Segment {
  key: string;
  hash: string;
  bytes: number;
}

interface Entry {
  bytes: number;
  /** Running queries holding the file. */
  pins: number;
}

export class SegmentCache {
  /** Files by hash, least recently used first (a Map keeps insertion order; a use re-inserts). */
  private readonly files = new Map<string, Entry>();
  private readonly fetching = new Map<string, Promise<void>>();
  private total = 0;
  /** Fetches from the blob store since start (tests and the benchmark read it). */
  fetches = 0;

  constructor(
    private readonly dir: string,
    private readonly blobs: BlobStore,
    private readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true });
    // What an earlier run left: whole files are kept (their names are their hashes), temp files removed.
    for (const name of readdirSync(dir)) {
      const m = /^([0-9a-f]{64})\.parquet$/.exec(name);
      if (!m) {
        rmSync(join(dir, name), { force: true, recursive: true });
        continue;
      }
      const bytes = statSync(join(dir, name)).size;
      this.files.set(m[1], { bytes, pins: 0 });
      this.total += bytes;
    }
  }

  get bytes(): number {
    return this.total;
  }

  pathOf(hash: string): string {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`a segment's content hash must be 64 hex digits, got '${hash}'`);
    return join(this.dir, `${hash}.parquet`);
  }

  /**
   * Makes the segments local files and holds them until release() is called; returns their paths in
   * the order given. A failed fetch releases what was taken.
   */
  async pin(segments: readonly Segment[]): Promise<{ paths: string[]; release: () => void }> {
    const held: Entry[] = [];
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const e of held) e.pins--;
      this.evict();
    };
    try {
      const paths: string[] = [];
      for (const s of segments) {
        let entry = this.files.get(s.hash);
        // Another query's release may evict an unheld file between its fetch and this line: fetch again.
        while (!entry) {
          await this.fetch(s);
          entry = this.files.get(s.hash);
        }
        // Most recently used: to the end of the order.
        this.files.delete(s.hash);
        this.files.set(s.hash, entry);
        entry.pins++;
        held.push(entry);
        paths.push(this.pathOf(s.hash));
      }
      this.evict();
      return { paths, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  private async fetch(s: Segment): Promise<void> {
    if (this.files.has(s.hash)) return;
    let pending = this.fetching.get(s.hash);
    if (!pending) {
      pending = this.download(s).finally(() => this.fetching.delete(s.hash));
      this.fetching.set(s.hash, pending);
    }
    await pending;
  }

  private async download(s: Segment): Promise<void> {
    const path = this.pathOf(s.hash);
    const content = await this.blobs.get(s.key, s.bytes);
    if (!content) throw new Error(`sealed readings segment ${s.key} is missing from the blob store`);
    const actual = createHash('sha256').update(content).digest('hex');
    if (actual !== s.hash) throw new Error(`sealed readings segment ${s.key} does not match its content hash (${actual} != ${s.hash})`);
    const temp = join(this.dir, `.fetch-${randomUUID()}.tmp`);
    try {
      await writeFile(temp, content);
      await rename(temp, path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    this.fetches++;
    this.files.set(s.hash, { bytes: content.byteLength, pins: 0 });
    this.total += content.byteLength;
  }

  /** Removes least recently used, unheld files while the folder is over its bound. */
  private evict(): void {
    if (this.total <= this.maxBytes) return;
    for (const [hash, entry] of this.files) {
      if (this.total <= this.maxBytes) break;
      if (entry.pins > 0) continue;
      this.files.delete(hash);
      this.total -= entry.bytes;
      rmSync(this.pathOf(hash), { force: true });
    }
  }
}
