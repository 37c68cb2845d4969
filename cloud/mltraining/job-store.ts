// Jobs persist as one JSON file each (<root>/jobs/<id>.json, written atomically) with their log as
// JSON lines next to them (<id>.logs.jsonl). Writes of one job are chained so that an older snapshot can
// never replace a newer one.
import { mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurable } from '../../core/serving/durable-file.js';
import type { TrainingJob, TrainingLogEntry } from './training-job.js';

/** A chatty custom script must not fill the disk: past this many lines a job's log keeps only a notice. */
export const maxLogEntriesPerJob = 20_000;
const maxMessageLength = 4_000;
export const logPageSize = 500;

interface LogSink {
  handle: Promise<FileHandle>;
  count: number;
  chain: Promise<unknown>;
}

export class JobStore {
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly logs = new Map<string, LogSink>();
  private readonly folder: string;

  constructor(
    root: string,
    private readonly maxLogEntries = maxLogEntriesPerJob,
  ) {
    this.folder = join(root, 'jobs');
  }

  private jobPath(id: string): string {
    return join(this.folder, `${id}.json`);
  }

  private logPath(id: string): string {
    return join(this.folder, `${id}.logs.jsonl`);
  }

  /** Every job on disk. A file that cannot be parsed is skipped and reported, never fatal. */
  async loadAll(onBadFile: (file: string, err: Error) => void): Promise<TrainingJob[]> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const jobs: TrainingJob[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        jobs.push(JSON.parse(await readFile(join(this.folder, name), 'utf8')) as TrainingJob);
      } catch (err) {
        onBadFile(name, err as Error);
      }
    }
    return jobs;
  }

  /** Durably saves a snapshot of the job (taken now, written after earlier saves of the same job). */
  save(job: TrainingJob): Promise<void> {
    const text = JSON.stringify(job, null, 1);
    return this.enqueue(job.id, () => writeFileDurable(this.jobPath(job.id), text, 0o600));
  }

  async remove(id: string): Promise<void> {
    await this.closeLog(id);
    await this.enqueue(id, async () => {
      await rm(this.jobPath(id), { force: true });
      await rm(this.logPath(id), { force: true });
    });
    this.chains.delete(id);
  }

  private enqueue(id: string, write: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(write);
    this.chains.set(
      id,
      next.catch(() => undefined),
    );
    return next;
  }

  /** Appends a log entry (written in order; synced by closeLog). */
  appendLog(id: string, entry: TrainingLogEntry): Promise<void> {
    let sink = this.logs.get(id);
    if (!sink) {
      sink = { handle: mkdir(this.folder, { recursive: true }).then(() => open(this.logPath(id), 'a', 0o600)), count: -1, chain: Promise.resolve() };
      this.logs.set(id, sink);
    }
    const target = sink;
    const line = { ...entry, message: entry.message.slice(0, maxMessageLength) };
    const write = target.chain.then(async () => {
      if (target.count < 0) target.count = (await this.readLog(id)).length;
      if (target.count > this.maxLogEntries) return;
      const notice = target.count === this.maxLogEntries;
      const shown = notice ? { level: 'warn', time: entry.time, message: `log truncated after ${this.maxLogEntries} entries` } : line;
      target.count += 1;
      await (await target.handle).appendFile(`${JSON.stringify(shown)}\n`);
    });
    target.chain = write.catch(() => undefined);
    return write;
  }

  /** Flushes the job's log to disk and releases its file handle. */
  async closeLog(id: string): Promise<void> {
    const sink = this.logs.get(id);
    if (!sink) return;
    this.logs.delete(id);
    await sink.chain;
    const handle = await sink.handle;
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async readLog(id: string): Promise<TrainingLogEntry[]> {
    let text: string;
    try {
      text = await readFile(this.logPath(id), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const entries: TrainingLogEntry[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        entries.push(JSON.parse(line) as TrainingLogEntry);
      } catch {
        // A torn last line after a crash: the entries before it are intact.
      }
    }
    return entries;
  }

  /** Waits for every pending write. */
  async flush(): Promise<void> {
    await Promise.all([...this.chains.values()]);
    await Promise.all([...this.logs.keys()].map((id) => this.closeLog(id)));
  }
}
