// platform-micro-server's hosting (core/workers/driver-hosting.ts): every driver runs in the main thread,
// built from the same driver module as in platform-server, through the same plugin contract. What the
// worker thread gave platform-server is kept by other means:
// - errors: a call goes through the same `invoke` and comes back as the same DriverError (with the
//   resource named), so callers see the same codes and messages;
// - a per-call timeout: a call that does not answer in time fails with DEADLINE_EXCEEDED instead of
//   hanging its caller (a driver cannot be preempted in one thread; it can be stopped waiting for);
// - crashes: every construction and call runs in an AsyncLocalStorage scope naming its resource, so
//   an error the driver throws later from its own timer or promise (an uncaught exception, which would
//   end the worker in platform-server) is traced back to that resource, which alone fails and is rebuilt.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DriverFactory, DriverLogger, Resource } from '../../plugins/driver.js';
import { deserializeError, DriverError, serializeError } from '../../plugins/errors.js';
import { unwrapTransfer } from '../../plugins/transfer.js';
import { LEVEL_VALUES, type LevelName } from '../config/log-levels.js';
import { driverDependencies } from '../workers/driver-dependencies.js';
import type { DependencyLink, DriverConstruction, DriverHandle, DriverHandleEvents, DriverHosting } from '../workers/driver-hosting.js';
import { invoke } from '../workers/invoke.js';
import { localSampler } from '../workers/port-sampler.js';
import { createRemote } from '../workers/remote.js';

/** The driver factory of a model, by api and model: the micro-server's drivers are linked in, not loaded by URL. */
export type DriverLookup = (api: string, model: string) => DriverFactory<unknown> | undefined;

/** The resource whose driver code is running now, across its timers and promises. */
const owner = new AsyncLocalStorage<InProcessDriver>();

/**
 * Routes an error nobody caught to the driver that caused it. Returns false when no driver's code was
 * running (then it is the runtime's own, and the caller decides).
 */
export function failOwningDriver(error: unknown): boolean {
  const driver = owner.getStore();
  if (!driver) return false;
  driver.crash(error instanceof Error ? error : new Error(String(error)));
  return true;
}

/** Races `work` against a timer; the timer never keeps the process alive. */
function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export class InProcessHosting implements DriverHosting {
  constructor(
    private readonly lookup: DriverLookup,
    /** How long one call into a driver may take before its caller gets DEADLINE_EXCEEDED. */
    private readonly callTimeoutMs: number,
  ) {}

  create(resource: string, events: DriverHandleEvents): DriverHandle {
    return new InProcessDriver(resource, events, this.lookup, this.callTimeoutMs);
  }
}

class InProcessDriver implements DriverHandle {
  private driver?: Resource;
  private name?: string;
  private minLevel = LEVEL_VALUES.info;
  private closed = false;
  private closing = false;
  private crashed = false;
  crashError?: Error;
  calls = 0;

  constructor(
    private readonly resource: string,
    private readonly events: DriverHandleEvents,
    private readonly lookup: DriverLookup,
    private readonly callTimeoutMs: number,
  ) {}

  get alive(): boolean {
    return !this.closed && !this.crashed;
  }

  async construct(construction: DriverConstruction, timeoutMs: number): Promise<void> {
    this.name = construction.name;
    this.minLevel = LEVEL_VALUES[construction.logLevel];
    const factory = this.lookup(construction.api, construction.model);
    if (!factory)
      throw new DriverError('UNIMPLEMENTED', `${construction.api} model ${construction.model} has no driver in platform-micro-server`, construction.name);
    const context = {
      name: construction.name,
      api: construction.api,
      model: construction.model,
      attributes: construction.attributes,
      logger: this.logger(construction.logger, construction.logFields),
      dependencies: driverDependencies(
        construction.name,
        construction.dependencies.map((d) => ({ name: d.name, api: d.api, remote: d.link as ReturnType<typeof createRemote<unknown>> })),
      ),
    };
    const building = owner.run(this, async () => factory(context));
    try {
      this.driver = await withTimeout(
        building,
        timeoutMs,
        () => new DriverError('DEADLINE_EXCEEDED', `construction of ${this.resource} timed out after ${timeoutMs} ms`),
      );
    } catch (err) {
      // A construction that finishes after its timeout is closed at once: nobody will use it.
      void building.then((late) => owner.run(this, () => late?.close?.())).catch(() => undefined);
      // The same DriverError, code and message, as a worker's construction that threw.
      throw err instanceof DriverError && err.code === 'DEADLINE_EXCEEDED' ? err : deserializeError(serializeError(err, construction.name));
    }
  }

  private logger(logger: string, fields: Record<string, unknown> | undefined): DriverLogger {
    const emit = (level: LevelName) => (message: string, extra?: Record<string, unknown>) => {
      if (LEVEL_VALUES[level] < this.minLevel) return;
      this.events.onLog({ level, logger, message, fields: { ...fields, ...extra } });
    };
    return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
  }

  /** One call into the driver, as the worker host makes it: a thrown error becomes a DriverError value. */
  private async invoke(method: string, args: unknown[]): Promise<unknown> {
    if (!this.alive) throw new DriverError('UNAVAILABLE', `${this.resource} is not running`);
    const plain = args.map((a) => unwrapTransfer(a).value);
    const invocation = owner.run(this, () => invoke(this.driver, method, plain, this.name));
    const { outcome } = await withTimeout(
      invocation,
      this.callTimeoutMs,
      () => new DriverError('DEADLINE_EXCEEDED', `${method} of ${this.resource} did not answer within ${this.callTimeoutMs} ms`, this.name),
    );
    if (!outcome.ok) throw deserializeError(outcome.error);
    return outcome.value;
  }

  call(method: string, args: unknown[]): Promise<unknown> {
    this.calls++;
    return this.invoke(method, args);
  }

  /** A dependent's link: a proxy that calls this driver directly, and samples it in this thread. */
  async openChannel(): Promise<DependencyLink> {
    return createRemote<unknown>(
      (method, args) => this.invoke(method, args),
      localSampler(() => (this.alive ? this.driver : undefined), this.name),
    );
  }

  async setLogLevel(level: LevelName): Promise<void> {
    this.minLevel = LEVEL_VALUES[level];
  }

  async close(timeoutMs: number): Promise<void> {
    this.closing = true;
    const closing = this.alive ? this.driver : undefined;
    this.driver = undefined;
    this.closed = true;
    if (!closing?.close) return;
    const { outcome } = await withTimeout(
      owner.run(this, () => invoke(closing, 'close', [], this.name)),
      timeoutMs,
      () => new DriverError('DEADLINE_EXCEEDED', `close of ${this.resource} timed out after ${timeoutMs} ms`),
    );
    if (!outcome.ok) throw deserializeError(outcome.error);
  }

  /** The driver threw outside of any call (failOwningDriver): it fails, and is closed to stop its timers. */
  crash(error: Error): void {
    if (this.closed || this.closing || this.crashed) return;
    this.crashed = true;
    this.crashError = error;
    const broken = this.driver;
    this.driver = undefined;
    this.events.onCrash(error);
    if (broken?.close) void owner.run(this, () => invoke(broken, 'close', [], this.name));
  }
}
