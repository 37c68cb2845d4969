// -log-file: the runtime's log lines written to the named file itself, rotated by size to numbered
// siblings (runtime.log -> runtime.1.log -> runtime.2.log ...), oldest deleted. A file is rotated
// before a line would take it past the limit, so no file exceeds it (except a single line longer than
// the limit, which gets a file of its own rather than being dropped).
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

export class RotatingLogFile extends Writable {
  private fd: number;
  private size: number;

  constructor(
    readonly path: string,
    private readonly maxBytes = LOG_FILE_BYTES,
    private readonly files = LOG_FILES,
  ) {
    super({ decodeStrings: true });
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a', 0o644);
    this.size = fstatSync(this.fd).size;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      if (this.size > 0 && this.size + chunk.length > this.maxBytes) this.rotate();
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
