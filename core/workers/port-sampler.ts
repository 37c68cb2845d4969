// Sampling over a dependency channel: a dependent (the data manager) asks a dependency's worker to call
// some of its driver's methods at a fixed frequency and to post the results back in batches. The calls
// then happen in the dependency's own thread, next to its driver, and only one message per batch
// crosses threads instead of a request and a reply per sample: at 5,000 samples/s that round trip was
// most of the cost of capture.
//
// Ticks are scheduled from the start time (start + k / frequency), not from the previous tick, so
// lateness never accumulates (no drift). A tick that comes while the previous sample is still being
// taken is skipped and counted rather than queued; after a long pause the missed ticks are skipped
// rather than fired in a burst. Times are whole milliseconds and a sampler takes at most one sample per
// millisecond, so `requested` is unique and increasing per sampler.
//
// The event loop's timers are whole milliseconds (a tick may fire up to 1 ms early) and its wake-up is
// late whenever the thread is not scheduled in time. A slow sampler (period >= PRECISE_MIN_PERIOD_MS)
// is therefore woken a little early by the event loop and waits out the rest of the period on a futex
// (Atomics.wait), which is precise to microseconds and already awake when the tick is due: never early,
// and a late wake-up of up to that margin costs nothing. The worker's event loop pauses for at most the
// margin (3 ms, at most a tenth of the period); fast samplers keep plain timers, whose extra wake-up per
// tick would cost more CPU than their lateness does.
import type { MessagePort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { serializeError, type SerializedError } from '../../plugins/errors.js';
import { unwrapTransfer } from '../../plugins/transfer.js';

/** Samplers with a period at least this long (50 Hz or slower) wait out each tick on a futex. */
export const PRECISE_MIN_PERIOD_MS = 20;
/** The most a tick is woken early for its futex wait; also bounded by a tenth of the period. */
const PRECISE_MARGIN_MS = 3;
/** Nobody ever notifies it: Atomics.wait on it is a precise sleep. */
const preciseClock = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread until performance.now() reaches `due` (a no-op when it has). */
function waitUntil(due: number): void {
  for (let rest = due - performance.now(); rest > 0; rest = due - performance.now()) Atomics.wait(preciseClock, 0, 0, rest);
}

/** The property of a dependency's proxy that holds its sampler (a symbol shared across bundles). */
export const SAMPLE = Symbol.for('platform.sample');

/** One driver call of a sample; a sample may need several (a board's analog readers, one per call). */
export interface SampleCall {
  method: string;
  args: unknown[];
}

export interface SampleSpec {
  calls: SampleCall[];
  frequencyHz: number;
  /** A batch is posted once a sample completes at least this long after the previous batch. */
  flushMs: number;
}

export interface Sample {
  /** Epoch milliseconds just before the first call, and just after the last. */
  requested: number;
  received: number;
  /** How late the tick fired against its schedule, in ms. */
  lateMs: number;
  /** The calls' results in order, or the error of the first call that failed. */
  values?: unknown[];
  error?: SerializedError;
}

export interface SampleBatch {
  samples: Sample[];
  /** Ticks skipped since the previous batch. */
  skipped: number;
}

export interface SampleStartMessage {
  sampleStart: number;
  spec: SampleSpec;
}

export interface SampleStopMessage {
  sampleStop: number;
}

export interface SampleBatchMessage {
  sampleBatch: number;
  batch: SampleBatch;
  /** The last batch: the sampler has stopped. */
  final: boolean;
}

export type SamplerFunction = (spec: SampleSpec, onBatch: (batch: SampleBatch) => void) => SamplerHandle;

export interface SamplerHandle {
  /** Stops ticking; resolves once the last batch (with a sample in progress, if any) was delivered. */
  stop(): Promise<void>;
}

export function isSampleMessage(message: object): message is SampleStartMessage | SampleStopMessage {
  return 'sampleStart' in message || 'sampleStop' in message;
}

/** The dependency's side: one running sampler, calling the driver that `target()` returns. */
class SourceSampler {
  private readonly period: number;
  /** How early the event loop wakes a tick that then waits on the futex (0: plain timer). */
  private readonly margin: number;
  private readonly start = performance.now();
  private tick = 0;
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<void>;
  private stopped = false;
  private lastRequested = 0;
  private lastFlush = performance.now();
  private samples: Sample[] = [];
  private transfer: ArrayBuffer[] = [];
  private skipped = 0;

  constructor(
    /** Delivers a batch: posted over the channel between workers, handed over directly in one thread. */
    private readonly post: (message: SampleBatchMessage, transfer: ArrayBuffer[]) => void,
    private readonly id: number,
    private readonly spec: SampleSpec,
    private readonly target: () => object | undefined,
    private readonly resource: string | undefined,
    /**
     * Whether slow samplers wait out their ticks on a futex. Only in a driver's own worker: in a shared
     * main thread (platform-micro-server) the wait would stall every other resource and the gRPC server.
     */
    precise = true,
  ) {
    this.period = 1000 / spec.frequencyHz;
    this.margin = precise && this.period >= PRECISE_MIN_PERIOD_MS ? Math.min(PRECISE_MARGIN_MS, this.period / 10) : 0;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = performance.now();
    this.tick++;
    let due = this.start + this.tick * this.period;
    if (due < now - this.period) {
      const missed = Math.floor((now - due) / this.period);
      this.skipped += missed;
      this.tick += missed;
      due = this.start + this.tick * this.period;
    }
    this.timer = setTimeout(() => this.fire(due), Math.max(0, due - now - this.margin));
  }

  private fire(due: number): void {
    // A tick that will be skipped (the previous capture still runs) does not hold up that capture's work.
    if (this.margin > 0 && !this.inFlight) waitUntil(due);
    const lateMs = performance.now() - due;
    if (this.inFlight) this.skipped++;
    else this.inFlight = this.take(lateMs).finally(() => (this.inFlight = undefined));
    this.schedule();
  }

  private async take(lateMs: number): Promise<void> {
    const requested = Math.max(Date.now(), this.lastRequested + 1);
    this.lastRequested = requested;
    const sample: Sample = { requested, received: requested, lateMs };
    try {
      const driver = this.target();
      if (!driver) throw Object.assign(new Error('the driver is not constructed'), { code: 'UNAVAILABLE' });
      const values: unknown[] = [];
      for (const call of this.spec.calls) {
        const fn = (driver as Record<string, unknown>)[call.method];
        if (typeof fn !== 'function') throw Object.assign(new Error(`the driver does not implement ${call.method}`), { code: 'UNIMPLEMENTED' });
        const { value, buffers } = unwrapTransfer(await fn.apply(driver, call.args));
        values.push(value ?? null);
        this.transfer.push(...buffers);
      }
      sample.values = values;
    } catch (err) {
      sample.error = serializeError(err, this.resource);
    }
    sample.received = Math.max(Date.now(), requested);
    this.samples.push(sample);
    if (performance.now() - this.lastFlush >= this.spec.flushMs) this.flush(false);
  }

  private flush(final: boolean): void {
    this.lastFlush = performance.now();
    const message: SampleBatchMessage = { sampleBatch: this.id, batch: { samples: this.samples, skipped: this.skipped }, final };
    const transfer = this.transfer;
    this.samples = [];
    this.transfer = [];
    this.skipped = 0;
    try {
      this.post(message, transfer);
    } catch {
      // The dependent went away; nobody is waiting for the samples.
    }
  }

  /** Stops ticking, lets a sample in progress finish and posts what is left as the final batch. */
  async stop(): Promise<void> {
    this.abandon();
    await this.inFlight;
    this.flush(true);
  }

  /** Stops without posting (the channel is gone). */
  abandon(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** Serves sample requests arriving on `port` (called by servePort for the messages that are not calls). */
export function sampleSource(port: MessagePort, target: () => object | undefined, resource?: string) {
  const running = new Map<number, SourceSampler>();
  port.on('close', () => {
    for (const sampler of running.values()) sampler.abandon();
    running.clear();
  });
  return (message: SampleStartMessage | SampleStopMessage): void => {
    if ('sampleStart' in message) {
      running.get(message.sampleStart)?.abandon();
      running.set(message.sampleStart, new SourceSampler((m, transfer) => port.postMessage(m, transfer), message.sampleStart, message.spec, target, resource));
      return;
    }
    const sampler = running.get(message.sampleStop);
    running.delete(message.sampleStop);
    if (sampler) void sampler.stop();
    else {
      // Unknown or already stopped: answer so that the dependent's stop() resolves.
      const reply: SampleBatchMessage = { sampleBatch: message.sampleStop, batch: { samples: [], skipped: 0 }, final: true };
      try {
        port.postMessage(reply);
      } catch {
        // The dependent went away.
      }
    }
  };
}

/** The dependent's side: starts samplers on the dependency behind `port` and routes their batches. */
export function sampleClient(port: MessagePort) {
  let nextId = 1;
  const active = new Map<number, { onBatch: (batch: SampleBatch) => void; stopped?: () => void }>();
  port.on('close', () => {
    for (const sampler of active.values()) sampler.stopped?.();
    active.clear();
  });
  const onMessage = (message: SampleBatchMessage): void => {
    const sampler = active.get(message.sampleBatch);
    if (!sampler) return;
    sampler.onBatch(message.batch);
    if (message.final) {
      active.delete(message.sampleBatch);
      sampler.stopped?.();
    }
  };
  const sample: SamplerFunction = (spec, onBatch) => {
    const id = nextId++;
    const entry: { onBatch: (batch: SampleBatch) => void; stopped?: () => void } = { onBatch };
    active.set(id, entry);
    port.postMessage({ sampleStart: id, spec } satisfies SampleStartMessage);
    let stopping: Promise<void> | undefined;
    return {
      stop() {
        stopping ??= new Promise<void>((resolve) => {
          if (!active.has(id)) return resolve();
          entry.stopped = resolve;
          try {
            port.postMessage({ sampleStop: id } satisfies SampleStopMessage);
          } catch {
            active.delete(id);
            resolve();
          }
        });
        return stopping;
      },
    };
  };
  return { sample, onMessage };
}

/**
 * A sampler of a driver in the caller's own thread (platform-micro-server): the same ticking, skipping
 * and batching as between workers, with batches handed over directly (no copy) and no futex waits.
 */
export function localSampler(target: () => object | undefined, resource?: string): SamplerFunction {
  let nextId = 1;
  return (spec, onBatch) => {
    let stopped: (() => void) | undefined;
    let ended = false;
    const sampler = new SourceSampler(
      (message) => {
        onBatch(message.batch);
        if (message.final) {
          ended = true;
          stopped?.();
        }
      },
      nextId++,
      spec,
      target,
      resource,
      false,
    );
    let stopping: Promise<void> | undefined;
    return {
      stop() {
        stopping ??= ended ? Promise.resolve() : new Promise<void>((resolve) => ((stopped = resolve), void sampler.stop()));
        return stopping;
      },
    };
  };
}
