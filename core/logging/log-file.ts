// -log-file: the runtime's log lines written to the named file itself, rotated daily and by size to
// numbered siblings (runtime.log -> runtime.1.log -> runtime.2.log ...), oldest deleted. A file is rotated
// before a line would take it past the limit, so no file exceeds it (except a single line longer than
// the limit, which gets a file of its own rather than being dropped), and before the first line of a new
// day (UTC, the day of the lines' own ISO timestamps), so each file holds one day at most; a file left
// from an earlier day (by a runtime stopped overnight) is rotated at the first line written today.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { Writable } from 'node:stream';

export const LOG_FILE_BYTES = 10 * 1024 * 1024;
/** Files kept: the named one and 9 numbered siblings, 100 MB at most. */
export const LOG_FILES = 10;

/** The n-th rotated sibling of `path`: runtime.log -> runtime.3.log; runtime -> runtime.3. */
export function siblingPath(path: string, n: number): string {
  const ext = extname(path);
  return ext ? `${path.slice(0, -ext.length)}.${n}${ext}` : `${path}.${n}`;
}

/** 2026-11-26 for any time of that UTC day. */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class RotatingLogFile extends Writable {
  private fd: number;
  private size: number;
  /** The UTC day (YYYY-MM-DD) of the named file's lines. */
  private day: string;

  constructor(
    readonly path: string,
    private readonly maxBytes = LOG_FILE_BYTES,
    private readonly files = LOG_FILES,
    /** The clock that decides the day (tests move it). */
    private readonly now: () => number = Date.now,
  ) {
    super({ decodeStrings: true });
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a', 0o644);
    const stat = fstatSync(this.fd);
    this.size = stat.size;
    // A file kept from an earlier run holds the day it was last written.
    this.day = utcDay(stat.size > 0 ? stat.mtimeMs : this.now());
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      const today = utcDay(this.now());
      if (this.size > 0 && (today !== this.day || this.size + chunk.length > this.maxBytes)) this.rotate();
      this.day = today;
      writeSync(this.fd, chunk);
      this.size += chunk.length;
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    try {
      fsyncSync(this.fd);
      closeSync(this.fd);
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  private rotate(): void {
    fsyncSync(this.fd);
    closeSync(this.fd);
    rmSync(siblingPath(this.path, this.files - 1), { force: true });
    for (let n = this.files - 2; n >= 1; n--) {
      const from = siblingPath(this.path, n);
      if (existsSync(from)) renameSync(from, siblingPath(this.path, n + 1));
    }
    renameSync(this.path, siblingPath(this.path, 1));
    this.fd = openSync(this.path, 'a', 0o644);
    this.size = 0;
  }
}
