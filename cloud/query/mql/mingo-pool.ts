// The child processes that evaluate residual MQL stages with mingo. Not worker threads: a V8 fatal error
// ("invalid size error" from a $range of two billion) or an exhausted heap ends the whole process a
// worker thread lives in, and with a thread that is the cloud. In a child process it ends that child:
// the task fails with RESOURCE_EXHAUSTED naming the heap cap, and the next task gets a fresh child.
// A task that outlives its deadline is stopped by killing its child, the only way to stop a synchronous
// runaway aggregation.
import { fork, type ChildProcess } from 'node:child_process';
import { resourceExhausted, StatusError } from '../../../core/serving/status-error.js';
import { childEntry } from '../../kit/child-entry.js';
import type { MingoTask } from './mingo-worker.js';

export interface MingoPoolOptions {
  /** Child processes evaluating at once. Default 2. */
  processes?: number;
  /** V8 heap cap of each child (--max-old-space-size), in MiB. Default 512. */
  maxHeapMb?: number;
  /** @deprecated the name from the worker-thread pool; same as processes. */
  threads?: number;
}

interface Job {
  task: MingoTask;
  signal: AbortSignal;
  resolve: (docs: Record<string, unknown>[]) => void;
  reject: (err: unknown) => void;
}

/** Resolves once a child listens for tasks. */
const readiness = new WeakMap<ChildProcess, Promise<void>>();

interface Slot {
  child?: ChildProcess;
  busy: boolean;
}

export class MingoPool {
  readonly maxHeapMb: number;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private started = 0;

  constructor(options: MingoPoolOptions = {}) {
    this.maxHeapMb = options.maxHeapMb ?? 512;
    const n = Math.max(1, options.processes ?? options.threads ?? 2);
    // Children are started ahead of need and replaced as soon as one ends: starting Node and loading
    // mingo takes a while (seconds under the tsx loader), and that must not eat into a query's time limit.
    this.slots = Array.from({ length: n }, () => ({ busy: false, child: this.spawn() }));
  }

  /** Child processes started so far (replacements included). */
  get childrenStarted(): number {
    return this.started;
  }

  run(task: MingoTask, signal: AbortSignal): Promise<Record<string, unknown>[]> {
    if (this.closed) return Promise.reject(new Error('the MQL evaluator is closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = { task, signal, resolve, reject };
      const onAbort = () => {
        const at = this.queue.indexOf(job);
        if (at >= 0) {
          this.queue.splice(at, 1);
          reject(signal.reason);
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the MQL evaluator is closed'));
    await Promise.all(this.slots.map((slot) => this.kill(slot)));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const job = this.queue.shift();
      if (!job) return;
      this.start(slot, job);
    }
  }

  private spawn(): ChildProcess {
    const { path, execArgv } = childEntry(import.meta.url, 'mingo-child');
    this.started++;
    const child = fork(path, [], {
      execArgv: [...execArgv, `--max-old-space-size=${this.maxHeapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    readiness.set(
      child,
      new Promise<void>((resolve) => {
        const onReady = (m: { ready?: boolean }) => {
          if (!m?.ready) return;
          child.off('message', onReady);
          resolve();
        };
        child.on('message', onReady);
      }),
    );
    // One that dies while idle is replaced. (Its IPC channel keeps this process alive: close() the pool.)
    child.stderr?.resume();
    child.once('exit', () => {
      for (const slot of this.slots ?? []) {
        if (slot.child === child && !slot.busy) slot.child = this.closed ? undefined : this.spawn();
      }
    });
    return child;
  }

  private start(slot: Slot, job: Job): void {
    slot.busy = true;
    const child = (slot.child ??= this.spawn());
    const id = this.nextId++;
    let stderr = '';
    const onStderr = (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000));
    child.stderr?.on('data', onStderr);
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.stderr?.off('data', onStderr);
      job.signal.removeEventListener('abort', onAbort);
      slot.busy = false;
      settle();
      if (!slot.child && !this.closed) slot.child = this.spawn();
      this.dispatch();
    };
    const onMessage = (reply: { id: number; docs?: Record<string, unknown>[]; error?: string; code?: number }) => {
      if (reply.id !== id) return;
      // A status error of the child (a result limit) keeps its code; anything else is the stages' fault.
      const error = () => (reply.code !== undefined ? new StatusError(reply.code, reply.error!) : new Error(reply.error));
      finish(() => (reply.error !== undefined ? job.reject(error()) : job.resolve(reply.docs ?? [])));
    };
    const onExit = (code: number | null, sig: NodeJS.Signals | null) => {
      slot.child = undefined;
      const fatal = /Fatal JavaScript[^\n]*|heap out of memory|invalid (array|string|size)[^\n]*/i.exec(stderr)?.[0];
      finish(() =>
        job.reject(
          resourceExhausted(
            `query: evaluating the stages ran out of memory (heap cap ${this.maxHeapMb} MiB, PLATFORM_MQL_HEAP_MB)` +
              `${fatal ? `: ${fatal.trim()}` : ` (evaluator exited with ${code ?? sig})`}; reduce the data or the size of what the stages build`,
          ),
        ),
      );
    };
    // Whether the task went to the child: until then the child is only starting, and killing it on a
    // timeout would make the next query wait for yet another start. On a loaded machine a start under
    // the tsx loader can outlast a whole time limit, so every retry would kill the child it waited for.
    let sent = false;
    const onAbort = () => {
      child.off('exit', onExit);
      if (sent) void this.kill(slot);
      finish(() => job.reject(job.signal.reason));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    job.signal.addEventListener('abort', onAbort, { once: true });
    void readiness.get(child)!.then(() => {
      if (done || child.exitCode !== null || child.signalCode !== null) return;
      sent = true;
      child.send({ id, task: job.task }, (err) => {
        if (err && !done) onExit(null, null);
      });
    });
  }

  private async kill(slot: Slot): Promise<void> {
    const child = slot.child;
    slot.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
