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
  /** Files kept of this process, the one being written included (other processes' files are left alone). */
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

  /**
   * Keeps this process's newest files, and at most as many again of processes that have ended (the runs
   * before a restart). The files of another live process that shares the folder are its own: pruning
   * them would delete exactly the history before an incident.
   */
  private prune(current: string): void {
    const ours = readdirSync(this.options.dir)
      .filter((n) => n.startsWith(this.options.prefix) && n.endsWith('.jsonl') && n !== current)
      .sort();
    const byPid = (name: string) => Number(/-(\d+)-\d{6}\.jsonl$/.exec(name)?.[1]);
    const mine = ours.filter((n) => byPid(n) === process.pid);
    const ended = ours.filter((n) => byPid(n) !== process.pid && !alive(byPid(n)));
    const remove = [
      ...mine.slice(0, Math.max(0, mine.length + 1 - this.options.maxFiles)),
      ...ended.slice(0, Math.max(0, ended.length - this.options.maxFiles)),
    ];
    for (const name of remove) rmSync(join(this.options.dir, name), { force: true });
  }
}

/** Whether a process id is running (EPERM: it is, under another user). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
