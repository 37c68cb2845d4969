// Full-time data capture (-ftdc): a sample of the process and its resources every second, appended as a
// JSON line to rotated files, so that the minutes before an incident can be read afterwards. It must
// never take the runtime down: a folder that cannot be written, or a write that fails later, logs one
// warning and ends the capture.
import { performance } from 'node:perf_hooks';
import type { DriverLogger } from '../../../plugins/driver.js';
import { ProcessSampler, type ProcessSample } from './process-sampler.js';
import { RotatingLines, type RotationOptions } from './rotating-lines.js';

export interface FtdcRecord {
  /** Time of the sample (ISO 8601, UTC). */
  t: string;
  /** Main-thread time the previous sample took to collect and write, in microseconds. */
  previous_sample_cost_us: number;
  process: ProcessSample;
  resources: unknown[];
  /** Set when the resource statistics could not be read for this sample. */
  resources_error?: string;
}

export interface FtdcOptions extends Omit<RotationOptions, 'prefix'> {
  intervalMs: number;
  /** Per-resource statistics at the moment of the sample. */
  resources: () => unknown[];
  log: DriverLogger;
}

export class FtdcCapture {
  private timer?: NodeJS.Timeout;
  private previousCost = 0;

  private constructor(
    private readonly options: FtdcOptions,
    private readonly file: RotatingLines,
    private readonly sampler: ProcessSampler,
  ) {}

  /** Starts capturing; returns undefined (after one warning) when the folder cannot be written. */
  static start(options: FtdcOptions): FtdcCapture | undefined {
    const file = new RotatingLines({ ...options, prefix: 'ftdc-' });
    try {
      file.open();
    } catch (err) {
      options.log.warn('full-time data capture is off: its folder cannot be written', { dir: options.dir, error: (err as Error).message });
      return undefined;
    }
    const capture = new FtdcCapture(options, file, new ProcessSampler());
    // unref: a capture alone must not keep a stopping process alive.
    capture.timer = setInterval(() => capture.tick(), options.intervalMs).unref();
    options.log.info('full-time data capture', {
      dir: options.dir,
      interval_ms: options.intervalMs,
      file_bytes: options.maxFileBytes,
      files: options.maxFiles,
    });
    return capture;
  }

  private tick(): void {
    const started = performance.now();
    const record: FtdcRecord = { t: new Date().toISOString(), previous_sample_cost_us: this.previousCost, process: this.sampler.sample(), resources: [] };
    try {
      record.resources = this.options.resources();
    } catch (err) {
      record.resources_error = String(err);
    }
    try {
      this.file.append(record);
    } catch (err) {
      this.options.log.warn('full-time data capture stopped: a sample could not be written', { dir: this.options.dir, error: (err as Error).message });
      this.stop();
      return;
    }
    this.previousCost = Math.round((performance.now() - started) * 1000);
  }

  /** Stops sampling and syncs the current file. Safe to call more than once. */
  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.sampler.close();
    try {
      this.file.close();
    } catch (err) {
      this.options.log.warn('full-time data capture: the last file could not be synced', { error: (err as Error).message });
    }
  }
}
