// JSON lines appended to a folder of size-rotated files, oldest deleted first. Writes go to the page
// cache synchronously (a line is a few hundred bytes once a second, cheaper than an async round trip);
// fsync happens off the main thread every `syncEveryLines` lines and on rotation, so a power cut loses
// at most that many lines and no rotation leaves a torn file behind. close() syncs what is left.
import { closeSync, fdatasync, fsync, fsyncSync, mkdirSync, openSync, readdirSync, rmSync, writeSync, close } from 'node:fs';
import { join } from 'node:path';

/** Orders files created in the same millisecond by this process (several writers, or fast rotations). */
let sequence = 0;

export interface RotationOptions {
  dir: string;
  /** File names are `<prefix><UTC time>-<pid>-<sequence>.jsonl`, so that names sort by age. */
  prefix: string;
  maxFileBytes: number;
  /** Files kept, the one being written included. */
  maxFiles: number;
  syncEveryLines: number;
}

export class RotatingLines {
  private fd?: number;
  private file?: string;
  private size = 0;
  private unsynced = 0;

  constructor(private readonly options: RotationOptions) {}

  /** Creates the folder and the first file. Throws when the folder cannot be written. */
  open(): void {
    mkdirSync(this.options.dir, { recursive: true });
    this.rotate();
  }

  append(record: unknown): void {
    if (this.fd === undefined) throw new Error('RotatingLines.append before open');
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    // A line larger than a whole file still gets a file of its own rather than being dropped.
    if (this.size > 0 && this.size + line.length > this.options.maxFileBytes) this.rotate();
    writeSync(this.fd, line);
    this.size += line.length;
    if (++this.unsynced >= this.options.syncEveryLines) {
      this.unsynced = 0;
      fdatasync(this.fd, () => undefined);
    }
  }

  /** The file being written, for tests and the start-up log line. */
  get current(): string | undefined {
    return this.file;
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  private rotate(): void {
    const previous = this.fd;
    const stamp = new Date().toISOString().replace(/:/g, '-');
    const name = `${this.options.prefix}${stamp}-${process.pid}-${String(sequence++).padStart(6, '0')}.jsonl`;
    this.fd = openSync(join(this.options.dir, name), 'a', 0o644);
    this.file = join(this.options.dir, name);
    this.size = 0;
    this.unsynced = 0;
    if (previous !== undefined) fsync(previous, () => close(previous, () => undefined));
    this.prune(name);
  }

  private prune(current: string): void {
    const files = readdirSync(this.options.dir)
      .filter((n) => n.startsWith(this.options.prefix) && n.endsWith('.jsonl') && n !== current)
      .sort();
    const excess = files.length + 1 - this.options.maxFiles;
    for (const name of files.slice(0, Math.max(0, excess))) rmSync(join(this.options.dir, name), { force: true });
  }
}
