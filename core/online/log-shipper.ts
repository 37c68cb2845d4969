// Ships the runtime's log lines (its own, its drivers' and its modules': everything the LogSink writes)
// to the cloud in batches from the durable LogQueue, one batch in flight, backing off while the cloud
// is unreachable.
import type { LogEntry } from '../../gen/platform/app/v1/robot_part.js';
import type { DriverLogger } from '../../plugins/contract.js';
import type { SinkRecord } from '../logging/sink.js';
import type { CloudLink } from '../cloud-link/cloud-link.js';
import type { LogQueue, QueuedLine } from './log-queue.js';
import { RETRY_MAX_MS, RETRY_MIN_MS } from './online-config.js';

export const BATCH_LINES = 5000;

/** Fields as JSON values: what a Struct can carry (errors become their text, bigints strings). */
function jsonFields(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return undefined;
  let plain = true;
  for (const key in fields) {
    const v = fields[key];
    if (
      v !== null && typeof v === 'object'
        ? !(Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype)
        : typeof v === 'bigint' || typeof v === 'function'
    ) {
      plain = false;
      break;
    }
  }
  if (plain) return fields;
  return JSON.parse(JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : typeof v === 'bigint' ? v.toString() : v))) as Record<
    string,
    unknown
  >;
}

export function queuedLine(record: SinkRecord, time: number): QueuedLine {
  const f = jsonFields(record.fields);
  return f && Object.keys(f).length
    ? { t: time, l: record.level, n: record.logger, m: record.message, f }
    : { t: time, l: record.level, n: record.logger, m: record.message };
}

const toEntry = (q: QueuedLine): LogEntry => ({ time: new Date(q.t), level: q.l, loggerName: q.n, message: q.m, fields: q.f ?? {} });

export class LogShipper {
  private stopped = false;
  private running?: Promise<void>;
  private failing = false;
  private wake?: () => void;
  /** Lines the cloud acknowledged, for the benchmark and tests. */
  shipped = 0;

  constructor(
    private readonly link: CloudLink,
    private readonly queue: LogQueue,
    private readonly log: DriverLogger,
  ) {}

  start(): void {
    this.running = this.run();
  }

  private async run(): Promise<void> {
    let backoff = RETRY_MIN_MS;
    while (!this.stopped) {
      const batch = this.queue.take(BATCH_LINES);
      if (!batch) {
        await this.queue.ready(1000);
        continue;
      }
      try {
        await this.link.unary(this.link.robot.log, { id: this.link.partId, logs: batch.lines.map(toEntry) });
        await this.queue.ack(batch.seqs);
        this.shipped += batch.lines.length;
        backoff = RETRY_MIN_MS;
        if (this.failing) this.log.info('log lines reach the cloud again', { queued: this.queue.size });
        this.failing = false;
      } catch (err) {
        this.queue.release(batch.seqs);
        if (!this.failing)
          this.log.warn('cannot ship log lines to the cloud; they stay queued on disk', {
            error: (err as Error).message,
            queued: this.queue.size,
            max_lines: this.queue.maxLines,
          });
        this.failing = true;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoff);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        backoff = Math.min(backoff * 2, RETRY_MAX_MS);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.queue.close();
    await this.running;
  }
}
