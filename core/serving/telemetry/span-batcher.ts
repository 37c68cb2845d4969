// Where ended spans wait for their exporter: a bounded queue sent in batches, off the hot path. A span's
// end only appends it to the queue; the export (serialising, the HTTP request or the file write) runs
// from a timer, one batch at a time. When the exporter falls behind and the queue is full, new spans are
// dropped and counted (`dropped`), never buffered without bound: a collector that is down must not grow
// the runtime's memory.
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

export interface BatchOptions {
  /** Spans kept waiting at most; more are dropped and counted (default 2048). */
  maxQueue: number;
  /** Spans per export (default 512). A full batch is sent at once, a partial one after `delayMs`. */
  maxBatch: number;
  /** The longest a span waits before its batch is sent (default 1000 ms). */
  delayMs: number;
  /** An export that has not answered by then counts as failed (default 10000 ms). */
  exportTimeoutMs: number;
}

export const DEFAULT_BATCH: BatchOptions = { maxQueue: 2048, maxBatch: 512, delayMs: 1000, exportTimeoutMs: 10_000 };

/** Running totals of one destination's spans. */
export interface SpanCounts {
  /** Accepted by the exporter. */
  exported: number;
  /** Not queued: the queue was full (or the destination had shut down). */
  dropped: number;
  /** Sent but refused, failed or timed out. */
  failed: number;
}

/** A destination of ended spans. */
export interface SpanSink {
  onEnd(span: ReadableSpan): void;
  readonly counts: SpanCounts;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const SUCCESS = 0;

export class SpanBatcher implements SpanSink {
  readonly counts: SpanCounts = { exported: 0, dropped: 0, failed: 0 };
  private readonly options: BatchOptions;
  private queue: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerNow = false;
  private exporting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly exporter: SpanExporter,
    options: Partial<BatchOptions> = {},
  ) {
    this.options = { ...DEFAULT_BATCH, ...options };
  }

  /** The queue's length now. */
  get queued(): number {
    return this.queue.length;
  }

  onEnd(span: ReadableSpan): void {
    if (this.closed || this.queue.length >= this.options.maxQueue) {
      this.counts.dropped++;
      return;
    }
    this.queue.push(span);
    this.schedule(this.queue.length >= this.options.maxBatch);
  }

  forceFlush(): Promise<void> {
    return this.drain(true);
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.drain(true);
    await this.exporter.shutdown();
  }

  /** A flush is due now (a full batch waits) or after the delay; an earlier one already set stays. */
  private schedule(now: boolean): void {
    if (this.timer && (this.timerNow || !now)) return;
    clearTimeout(this.timer);
    this.timerNow = now;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.drain(false);
      },
      now ? 0 : this.options.delayMs,
    );
    this.timer.unref();
  }

  /** Sends one batch (all of them with `all`), one export at a time. */
  private drain(all: boolean): Promise<void> {
    if (this.exporting) return all ? this.exporting.then(() => this.drain(true)) : this.exporting;
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue.splice(0, this.options.maxBatch);
    this.exporting = this.send(batch).then(() => {
      this.exporting = undefined;
      if (this.queue.length > 0 && !this.closed) this.schedule(this.queue.length >= this.options.maxBatch);
    });
    return all ? this.exporting.then(() => this.drain(true)) : this.exporting;
  }

  private send(batch: ReadableSpan[]): Promise<void> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        if (ok) this.counts.exported += batch.length;
        else this.counts.failed += batch.length;
        resolve();
      };
      const timeout = setTimeout(() => settle(false), this.options.exportTimeoutMs);
      timeout.unref();
      try {
        this.exporter.export(batch, (result) => settle(result.code === SUCCESS));
      } catch {
        settle(false);
      }
    });
  }
}

/** Each span exported as it ends (the tests' in-memory exporter, the console). */
export class ImmediateSink implements SpanSink {
  readonly counts: SpanCounts = { exported: 0, dropped: 0, failed: 0 };

  constructor(private readonly exporter: SpanExporter) {}

  onEnd(span: ReadableSpan): void {
    try {
      this.exporter.export([span], (result) => (result.code === SUCCESS ? this.counts.exported++ : this.counts.failed++));
    } catch {
      this.counts.failed++;
    }
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }
}
