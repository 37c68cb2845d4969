// Thumbnails are made in one child process with a heap cap, one at a time: decoding runs off the cloud's
// main thread (other tenants' calls never wait behind a large PNG), and an image that exhausts memory or
// takes too long ends that child only. The child is replaced for the next request. Waiting jobs are
// served fairly between organizations (thumbnail-queue.ts), and a job's content is read only when its
// turn comes, so waiting requests hold no image bytes. Content in a local file (the embedded store's
// blobs) is read by the child itself: the cloud's main process never holds it. When it did, each 6.6 MB
// image read and copied into the IPC message grew the main heap's external memory, and V8 answered with
// a full garbage collection every half second or so, each stopping the main thread for 10 to 120 ms:
// another organization's 1-row read waited behind them (bench:isolation huge-thumbnails, p99 6.7x idle
// with only large images decoded).
import { fork, type ChildProcess } from 'node:child_process';
import { childEntry } from '../kit/child-entry.js';
import { ThumbnailError } from './thumbnail-error.js';
import { FairQueue, maxQueuedPerOrgFromEnv } from './thumbnail-queue.js';

/** How long one thumbnail may take before its child is killed. */
const TIME_LIMIT_MS = 10_000;
/** The child's V8 heap cap in MiB (decoded pixels live outside it, bounded by the megapixel limit). */
const HEAP_MB = 256;

/** Content the child reads itself from a file on this machine. */
export interface ContentFile {
  path: string;
  /** A larger file is refused (422) before it is read. */
  maxBytes: number;
  /** What the content is, for messages: "binary data <id>". */
  name: string;
}

/** The content, how to read it when the job's turn comes, or the file the child reads it from. */
export type Content = Uint8Array | (() => Promise<Uint8Array>) | ContentFile;

interface Job {
  content: Content;
  mimeType: string;
  size: number;
  resolve(thumbnail: Buffer): void;
  reject(err: Error): void;
}

export class ThumbnailProcess {
  private child?: ChildProcess;
  private ready?: Promise<void>;
  private readonly queue: FairQueue<Job>;
  private busy = false;
  private nextId = 1;
  private closed = false;

  constructor(maxQueuedPerOrg = maxQueuedPerOrgFromEnv()) {
    this.queue = new FairQueue<Job>(maxQueuedPerOrg);
  }

  /**
   * The thumbnail (JPEG) of an image's content; a ThumbnailError (HTTP status and message) otherwise.
   * `org` is whose turn the job waits for (see thumbnail-queue.ts).
   */
  make(content: Content, mimeType: string, size: number, org = ''): Promise<Buffer> {
    if (this.closed) return Promise.reject(new ThumbnailError(503, 'the cloud is stopping'));
    return new Promise((resolve, reject) => {
      this.queue.push(org, { content, mimeType, size, resolve, reject });
      this.next();
    });
  }

  /** The process id of the child while it runs (to see its priority, thumbnail-priority.ts). */
  get childPid(): number | undefined {
    return this.child?.pid;
  }

  close(): void {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new ThumbnailError(503, 'the cloud is stopping'));
    this.child?.kill('SIGKILL');
    this.child = undefined;
  }

  private spawn(): ChildProcess {
    const { path, execArgv } = childEntry(import.meta.url, 'thumbnail-child');
    const child = fork(path, [], {
      execArgv: [...execArgv, `--max-old-space-size=${HEAP_MB}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    this.ready = new Promise((resolve) => {
      const onReady = (m: { ready?: boolean }) => {
        if (!m?.ready) return;
        child.off('message', onReady);
        resolve();
      };
      child.on('message', onReady);
    });
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    return child;
  }

  private next(): void {
    if (this.busy) return;
    const job = this.queue.shift();
    if (!job) return;
    this.busy = true;
    void this.contentOf(job).then(
      (bytes) => this.run(job, bytes),
      (err: Error) => {
        this.busy = false;
        job.reject(err);
        this.next();
      },
    );
  }

  private async contentOf(job: Job): Promise<Uint8Array | ContentFile> {
    return typeof job.content === 'function' ? job.content() : job.content;
  }

  private run(job: Job, content: Uint8Array | ContentFile): void {
    const child = (this.child ??= this.spawn());
    const id = this.nextId++;
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      this.busy = false;
      settle();
      this.next();
    };
    const onMessage = (reply: { id: number; thumbnail?: Uint8Array; error?: string; httpStatus?: number }) => {
      if (reply.id !== id) return;
      finish(() =>
        reply.thumbnail ? job.resolve(Buffer.from(reply.thumbnail)) : job.reject(new ThumbnailError(reply.httpStatus ?? 422, reply.error ?? 'no thumbnail')),
      );
    };
    const onExit = () =>
      finish(() => job.reject(new ThumbnailError(422, `the ${job.mimeType} content cannot be made into a thumbnail: decoding it ran out of memory`)));
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      child.kill('SIGKILL');
      if (this.child === child) this.child = undefined;
      finish(() => job.reject(new ThumbnailError(422, `the ${job.mimeType} content took more than ${TIME_LIMIT_MS / 1000} s to decode`)));
    }, TIME_LIMIT_MS);
    child.on('message', onMessage);
    child.once('exit', onExit);
    void this.ready!.then(() => {
      if (settled) return;
      const source = content instanceof Uint8Array ? { bytes: content } : { file: content };
      child.send({ id, ...source, mimeType: job.mimeType, size: job.size }, (err) => {
        if (err) onExit();
      });
    });
  }
}
