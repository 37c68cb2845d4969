// One capture method of one resource: calls it at its frequency and appends each result to the method's
// open capture file. Ticks are scheduled from the start time (start + k * period), not from the previous
// tick, so lateness never accumulates (no drift); a tick that comes while the previous call is still
// running is skipped and counted rather than queued.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { CaptureMethodSpec } from './attributes.js';
import { CaptureFileWriter, type CaptureFileHeader } from './capture-file.js';
import type { Captured, CaptureTarget } from './capture-methods.js';

const LATENESS_SAMPLES = 4096;

export interface CaptureStatistics {
  records: number;
  skipped: number;
  errors: number;
  last_error: string | null;
  /** Lateness of ticks against their schedule, in ms (most recent 4096). */
  lateness: number[];
}

export interface CaptureLoopOptions {
  captureDir: string;
  resource: string;
  api: string;
  spec: CaptureMethodSpec;
  maxFileBytes: number;
  /** Calls the method and shapes its result. */
  capture: (target: CaptureTarget, params: Record<string, unknown>) => Promise<Captured>;
  target: CaptureTarget;
  onError(message: string): void;
}

/** File names sort in creation order: a fixed-width UTC time, then a random part. */
export function captureFileBase(dir: string): string {
  return join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`);
}

export class CaptureLoop {
  private timer?: NodeJS.Timeout;
  private start = 0;
  private tick = 0;
  private inFlight?: Promise<void>;
  private writer?: CaptureFileWriter;
  private stopped = false;
  private latenessAt = 0;
  private lastRequested = 0;
  readonly dir: string;
  readonly stats: CaptureStatistics = { records: 0, skipped: 0, errors: 0, last_error: null, lateness: [] };
  private readonly period: number;

  constructor(private readonly options: CaptureLoopOptions) {
    this.period = 1000 / options.spec.frequencyHz;
    // <capture_dir>/<subtype>/<resource>/<method>: a method's files sort by time in their own folder.
    this.dir = join(options.captureDir, options.api.split(':').pop()!, options.resource, options.spec.method);
    mkdirSync(this.dir, { recursive: true });
  }

  get key(): string {
    return `${this.options.resource}/${this.options.spec.method}`;
  }

  run(): void {
    this.start = performance.now();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = performance.now();
    this.tick++;
    let due = this.start + this.tick * this.period;
    if (due < now - this.period) {
      // Far behind (a long pause): skip the missed ticks instead of firing them in a burst.
      const missed = Math.floor((now - due) / this.period);
      this.stats.skipped += missed;
      this.tick += missed;
      due = this.start + this.tick * this.period;
    }
    this.timer = setTimeout(() => this.fire(due), Math.max(0, due - now));
  }

  private fire(due: number): void {
    // A ring of the last LATENESS_SAMPLES values: no shifting of the array on every tick.
    this.stats.lateness[this.latenessAt++ % LATENESS_SAMPLES] = performance.now() - due;
    if (this.inFlight) this.stats.skipped++;
    else this.inFlight = this.captureOnce().finally(() => (this.inFlight = undefined));
    this.schedule();
  }

  private async captureOnce(): Promise<void> {
    // Times are whole milliseconds (protobuf Timestamps through Date). A late tick that fires right after
    // the previous capture could get the same millisecond; one capture per millisecond at most keeps
    // time_requested unique and ordered per method (frequencies are at most 1000 Hz, so on schedule no
    // two ticks share a millisecond anyway).
    const requested = new Date(Math.max(Date.now(), this.lastRequested + 1));
    this.lastRequested = requested.getTime();
    let captured: Captured;
    try {
      captured = await this.options.capture(this.options.target, this.options.spec.additionalParams);
    } catch (err) {
      this.stats.errors++;
      const message = `capture ${this.key}: ${(err as Error).message}`;
      if (this.stats.last_error !== message) this.options.onError(message);
      this.stats.last_error = message;
      return;
    }
    const received = new Date(Math.max(Date.now(), requested.getTime()));
    const record =
      captured.kind === 'tabular'
        ? SensorData.encode({ metadata: { timeRequested: requested, timeReceived: received, mimeType: '' }, struct: captured.data }).finish()
        : SensorData.encode({
            metadata: { timeRequested: requested, timeReceived: received, mimeType: captured.binary.mimeType },
            binary: Buffer.from(captured.binary.data),
          }).finish();
    try {
      this.append(record, captured.kind);
      this.stats.records++;
    } catch (err) {
      this.stats.errors++;
      const message = `capture ${this.key}: writing to ${this.dir} failed: ${(err as Error).message}`;
      if (this.stats.last_error !== message) this.options.onError(message);
      this.stats.last_error = message;
    }
  }

  private append(record: Uint8Array, kind: 'tabular' | 'binary'): void {
    if (!this.writer) {
      const header: CaptureFileHeader = {
        upload_id: randomUUID(),
        component_type: this.options.api,
        component_name: this.options.resource,
        method_name: this.options.spec.method,
        method_parameters: this.options.spec.additionalParams as Record<string, unknown>,
        tags: this.options.spec.tags,
        kind,
      };
      this.writer = new CaptureFileWriter(captureFileBase(this.dir), header);
    }
    this.writer.append(record);
    if (this.writer.bytes >= this.options.maxFileBytes) this.rotate();
  }

  /** fdatasync of the open file, if it has new records (once a second, see capture-file.ts). */
  syncOpenFile(): void {
    this.writer?.sync();
  }

  /** Closes the open file (it becomes syncable). */
  rotate(): void {
    const writer = this.writer;
    this.writer = undefined;
    writer?.close();
  }

  get openBytes(): number {
    return this.writer?.bytes ?? 0;
  }

  /** Stops ticking, lets a running capture finish (and be written), and closes the file. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
    this.rotate();
  }
}
