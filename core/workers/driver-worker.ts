// The kernel's handle on one resource's worker: a Piscina pool of exactly one thread that hosts the
// driver. Calls are Piscina tasks. The worker dying for any reason (an uncaught error, a hung
// construction that had to be aborted) is reported once through `onCrash`.
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { deserializeError, DriverError } from '../../plugins/errors.js';
import { unwrapTransfer } from '../../plugins/transfer.js';
import { portSender } from './port-rpc.js';
import type { DriverConstruction, DriverHandle, DriverHandleEvents, DriverHosting } from './driver-hosting.js';
import type { DriverTask, LogLevelName, LogRecord, LogSyncRecord, Outcome } from './protocol.js';

export type DriverWorkerEvents = DriverHandleEvents;

/** platform-server's hosting: every driver in its own worker thread. */
export const workerHosting: DriverHosting = { create: (resource, events) => new DriverWorker(resource, events) };

/**
 * In dist/ the host is one CommonJS bundle (scripts/build.mjs): Piscina requires it, and a worker that
 * loads no ES module never starts the ES module loader. Under tsx (tests) it is TypeScript: Piscina
 * loads it with require, so tsx's require hook alone is enough, and it starts faster than the full tsx
 * loader, which would add a module-hooks thread to every worker.
 */
function hostLocation(): { filename: string; execArgv: string[] } {
  if (!import.meta.url.endsWith('.ts')) return { filename: new URL('./driver-host.cjs', import.meta.url).href, execArgv: [] };
  const require = createRequire(import.meta.url);
  return { filename: new URL('./driver-host.ts', import.meta.url).href, execArgv: ['--require', require.resolve('tsx/cjs')] };
}

export class DriverWorker implements DriverHandle {
  private readonly pool: Piscina;
  private closed = false;
  private closing = false;
  private crashed = false;
  private logsSynced?: () => void;
  /** Calls made through this handle (the API layer's), for diagnostics; a dependent's direct calls are not seen here. */
  calls = 0;
  /** Calls go over a direct channel to the worker once the driver is built: a Piscina task costs more. */
  private send?: (method: string, args: unknown[]) => Promise<unknown>;

  constructor(
    readonly resource: string,
    private readonly events: DriverWorkerEvents,
  ) {
    const { filename, execArgv } = hostLocation();
    this.pool = new Piscina({
      filename,
      execArgv,
      // A long-lived, stateful driver: one thread that never idles out, with no atomics wait between tasks
      // so that its timers and I/O keep running.
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Infinity,
      atomics: 'disabled',
      // Driver methods are async and may take long (a motor's GoFor); others must not queue behind them.
      concurrentTasksPerWorker: 1024,
      name: 'default',
      // Per-pool run/wait histograms cost about 1 ms of main thread per resource at start, and nothing reads them.
      recordTiming: false,
    });
    this.pool.on('message', (message: LogRecord | LogSyncRecord) => {
      if (message?.type === 'log') this.events.onLog(message);
      else if (message?.type === 'log-sync') this.logsSynced?.();
    });
    // Piscina reports a worker's uncaught exception in the same tick, just after workerDestroy (as the
    // 'error' event or as the failure of its tasks): wait a turn, so that the crash keeps the real
    // exception, message and stack, rather than only "exited".
    this.pool.on('workerDestroy', () => setImmediate(() => this.crash(new Error(`the worker of ${resource} exited`))));
    this.pool.on('error', (err: Error) => this.crash(err));
  }

  get alive(): boolean {
    return !this.closed && !this.crashed;
  }

  /** Why the worker ended, once it crashed. */
  crashError?: Error;

  private crash(error: Error): void {
    if (this.closed || this.closing || this.crashed) return;
    this.crashed = true;
    this.crashError = error;
    this.events.onCrash(error);
    void this.pool.destroy().catch(() => undefined);
  }

  private async run(task: DriverTask, transferList: MessagePort[] = [], signal?: AbortSignal): Promise<unknown> {
    if (!this.alive) throw new DriverError('UNAVAILABLE', `${this.resource} is not running`);
    let outcome: Outcome;
    try {
      outcome = (await this.pool.run(task, { transferList, signal })) as Outcome;
    } catch (err) {
      // A task only fails when its worker died or was aborted; driver errors come back as outcomes.
      const error = err as Error;
      this.crash(error);
      throw new DriverError('UNAVAILABLE', `${this.resource} crashed: ${error.message}`);
    }
    if (!outcome.ok) throw deserializeError(outcome.error);
    return outcome.value;
  }

  /** Builds the driver. A construction that outlives `timeoutMs` aborts, which ends the worker. */
  async construct(construction: DriverConstruction, timeoutMs: number): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    const synced = new Promise<void>((resolve) => (this.logsSynced = resolve));
    const { port1, port2 } = new MessageChannel();
    // Between workers, a dependency's link is the MessagePort that its openChannel() returned.
    const dependencies = construction.dependencies.map((d) => ({ name: d.name, api: d.api, port: d.link as MessagePort }));
    try {
      await this.run({ op: 'construct', ...construction, dependencies, kernelPort: port1 }, [...dependencies.map((d) => d.port), port1], signal);
      // The marker follows the construction's log lines on their channel (bounded, in case it is lost).
      await Promise.race([synced, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      this.send = portSender(port2, this.resource);
    } catch (err) {
      port2.close();
      if (signal.aborted) throw new DriverError('DEADLINE_EXCEEDED', `construction of ${this.resource} timed out after ${timeoutMs} ms`);
      throw err;
    }
  }

  call(method: string, args: unknown[]): Promise<unknown> {
    this.calls++;
    if (!this.alive) return Promise.reject(new DriverError('UNAVAILABLE', `${this.resource} is not running`));
    return this.send ? this.send(method, args) : this.run({ op: 'call', method, args: args.map((a) => unwrapTransfer(a).value) });
  }

  /** Opens a direct channel on which a dependent's worker calls this driver; returns the dependent's end. */
  async openChannel(): Promise<MessagePort> {
    const { port1, port2 } = new MessageChannel();
    await this.run({ op: 'serve', port: port1 }, [port1]);
    return port2;
  }

  async setLogLevel(level: LogLevelName): Promise<void> {
    if (this.alive) await this.run({ op: 'logLevel', level });
  }

  /** Closes the driver (bounded by `timeoutMs`) and ends the worker. Never throws for a dead worker. */
  async close(timeoutMs: number): Promise<void> {
    let failure: unknown;
    this.closing = true;
    if (this.alive) {
      const timer = AbortSignal.timeout(timeoutMs);
      try {
        await this.run({ op: 'close' }, [], timer);
      } catch (err) {
        failure = timer.aborted ? new DriverError('DEADLINE_EXCEEDED', `close of ${this.resource} timed out after ${timeoutMs} ms`) : err;
      }
    }
    this.closed = true;
    await this.pool.destroy().catch(() => undefined);
    if (failure) throw failure;
  }
}
