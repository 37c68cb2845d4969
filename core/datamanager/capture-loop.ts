// One capture method of one resource. The ticks run in the captured resource's own worker (a sampler,
// core/workers/port-sampler.ts: drift-corrected, a tick that comes while the previous capture still
// runs is skipped and counted), which posts the results here in batches; each batch is encoded,
// framed and appended to the method's open capture file with one write(2).
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { SampleBatch, SamplerFunction, SamplerHandle } from '../workers/port-sampler.js';
import type { CaptureMethodSpec } from '../config/data-manager-attributes.js';
import { CaptureFileWriter, frame, type CaptureFileHeader, type CaptureFileIo } from './capture-file.js';
import type { CaptureCall, Captured } from '../resource/capture-methods.js';
import { framedTabularRecord } from './tabular-record.js';
import { endCaptureSpan, startCaptureSpan, startWriteSpan } from './capture-tracing.js';
import { ownerTag } from './file-owner.js';

const LATENESS_SAMPLES = 4096;
/**
 * The status' lateness percentiles cover the ticks of the last 10 s: how the method ticks now, not since
 * the runtime started (a start-up's busy seconds would otherwise stay in a 20 Hz method's p99 for minutes).
 */
export const LATENESS_WINDOW_MS = 10_000;
/** How long captures wait in the captured resource's worker before they travel here together. */
export const CAPTURE_BATCH_MS = 50;

export interface CaptureStatistics {
  records: number;
  skipped: number;
  errors: number;
  last_error: string | null;
  /** Lateness of ticks against their schedule, in ms (most recent 4096). */
  lateness: number[];
  /** When each of those ticks was taken (epoch ms), at the same index. */
  latenessTimes: number[];
}

export interface CaptureLoopOptions {
  captureDir: string;
  resource: string;
  api: string;
  spec: CaptureMethodSpec;
  maxFileBytes: number;
  /** The driver calls of one capture, and how their results become what is stored. */
  calls: CaptureCall[];
  shape(values: unknown[]): Captured;
  /** Starts the sampler in the captured resource's worker. */
  sample: SamplerFunction;
  onError(message: string): void;
  /** The capture files' writes (tests inject a full disk); node:fs by default. */
  io?: CaptureFileIo;
}

/** Files made by this process so far: orders the files made within one millisecond. */
let fileSequence = 0;

/**
 * File names sort in creation order: a fixed-width UTC time, then this process' fixed-width file count (a
 * method closes files faster than one a millisecond at a small maximum_capture_file_size_bytes), then a
 * random part, so that two runtimes sharing a capture_dir never collide; last the owner (file-owner.ts), so
 * that another runtime starting on the same capture_dir leaves this process' open files alone.
 */
export function captureFileBase(dir: string): string {
  const sequence = String(fileSequence++ % 1_000_000).padStart(6, '0');
  return join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${sequence}-${randomUUID().slice(0, 8)}-${ownerTag()}`);
}

export class CaptureLoop {
  private sampler?: SamplerHandle;
  private writer?: CaptureFileWriter;
  private latenessAt = 0;
  /** The last error of the batch being stored (its span's status). */
  private batchError: string | undefined;
  readonly dir: string;
  readonly stats: CaptureStatistics = { records: 0, skipped: 0, errors: 0, last_error: null, lateness: [], latenessTimes: [] };

  constructor(private readonly options: CaptureLoopOptions) {
    // <capture_dir>/<subtype>/<resource>/<method>: a method's files sort by time in their own folder.
    this.dir = join(options.captureDir, options.api.split(':').pop()!, options.resource, options.spec.method);
    mkdirSync(this.dir, { recursive: true });
  }

  get key(): string {
    return `${this.options.resource}/${this.options.spec.method}`;
  }

  /** The lateness (ms) of the ticks taken in the LATENESS_WINDOW_MS before `now` (epoch ms). */
  recentLateness(now = Date.now()): number[] {
    const since = now - LATENESS_WINDOW_MS;
    return this.stats.lateness.filter((_late, i) => this.stats.latenessTimes[i] >= since);
  }

  run(): void {
    this.sampler = this.options.sample({ calls: this.options.calls, frequencyHz: this.options.spec.frequencyHz, flushMs: CAPTURE_BATCH_MS }, (batch) =>
      this.store(batch),
    );
  }

  private fail(message: string): void {
    this.batchError = message;
    this.stats.errors++;
    if (this.stats.last_error !== message) this.options.onError(message);
    this.stats.last_error = message;
  }

  /** Encodes a batch and appends it, closing the file at maximum_capture_file_size_bytes. */
  private store(batch: SampleBatch): void {
    const span = batch.samples.length > 0 ? startCaptureSpan(this.options.resource, this.options.spec.method, batch.samples[0].requested) : undefined;
    const before = { records: this.stats.records, errors: this.stats.errors };
    this.batchError = undefined;
    try {
      this.storeBatch(batch, span);
    } finally {
      span?.setAttributes({
        'platform.capture.records': this.stats.records - before.records,
        'platform.capture.errors': this.stats.errors - before.errors,
        'platform.capture.skipped': batch.skipped,
      });
      endCaptureSpan(span, this.batchError);
    }
  }

  private storeBatch(batch: SampleBatch, span: ReturnType<typeof startCaptureSpan>): void {
    this.stats.skipped += batch.skipped;
    let frames: Buffer[] = [];
    let count = 0;
    let bytes = 0;
    const write = (): boolean => {
      const writing = startWriteSpan(span, count, bytes);
      try {
        this.writerFor().appendFrames(frames, count);
        this.stats.records += count;
        endCaptureSpan(writing);
        return true;
      } catch (err) {
        // The batch is not stored (capture-file.ts cut its bytes again): each of its readings is an error.
        this.stats.errors += count - 1;
        this.fail(`capture ${this.key}: writing to ${this.dir} failed: ${(err as Error).message}`);
        endCaptureSpan(writing, (err as Error).message);
        if (this.writer?.broken) this.closeFromStore();
        return false;
      } finally {
        frames = [];
        count = 0;
        bytes = 0;
      }
    };
    for (const sample of batch.samples) {
      // A ring of the last LATENESS_SAMPLES values: no shifting of the array on every tick.
      this.stats.lateness[this.latenessAt % LATENESS_SAMPLES] = sample.lateMs;
      this.stats.latenessTimes[this.latenessAt++ % LATENESS_SAMPLES] = sample.requested;
      if (sample.error) {
        this.fail(`capture ${this.key}: ${sample.error.message}`);
        continue;
      }
      let framed: Buffer;
      try {
        framed = this.framed(sample.requested, sample.received, this.options.shape(sample.values!));
      } catch (err) {
        this.fail(`capture ${this.key}: ${(err as Error).message}`);
        continue;
      }
      frames.push(framed);
      count++;
      bytes += framed.byteLength;
      let fileBytes: number;
      try {
        fileBytes = this.writerFor().bytes; // the header counts towards the limit too
      } catch (err) {
        this.stats.errors += count - 1;
        this.fail(`capture ${this.key}: writing to ${this.dir} failed: ${(err as Error).message}`);
        frames = [];
        count = 0;
        bytes = 0;
        continue;
      }
      if (fileBytes + bytes >= this.options.maxFileBytes) {
        if (write()) this.closeFromStore();
      }
    }
    if (count > 0) write();
  }

  /** One framed SensorData record (capture-file.ts); tabular ones through the hand-written encoder. */
  private framed(requested: number, received: number, captured: Captured): Buffer {
    if (captured.kind === 'tabular') return framedTabularRecord(requested, received, captured.data);
    const { data, mimeType } = captured.binary;
    return frame(
      SensorData.encode({
        metadata: { timeRequested: new Date(requested), timeReceived: new Date(received), mimeType },
        binary: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      }).finish(),
    );
  }

  private writerFor(): CaptureFileWriter {
    if (!this.writer) {
      const header: CaptureFileHeader = {
        upload_id: randomUUID(),
        component_type: this.options.api,
        component_name: this.options.resource,
        method_name: this.options.spec.method,
        method_parameters: this.options.spec.additionalParams as Record<string, unknown>,
        tags: this.options.spec.tags,
        kind: this.options.spec.kind,
      };
      this.writer = new CaptureFileWriter(captureFileBase(this.dir), header, this.options.io);
    }
    return this.writer;
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

  /**
   * Closes the open file from store(): at the size limit, or when a failed write could not be cut away
   * (its whole records stay syncable; sync skips the torn tail). The next batch starts a new file. Should
   * the close fail too, the `.prog` file is recovered at the next start like one left by a crash.
   */
  private closeFromStore(): void {
    try {
      this.rotate();
    } catch (err) {
      const message = `capture ${this.key}: closing a capture file in ${this.dir} failed: ${(err as Error).message}`;
      if (this.stats.last_error !== message) this.options.onError(message);
      this.stats.last_error = message;
    }
  }

  get openBytes(): number {
    return this.writer?.bytes ?? 0;
  }

  /** Stops the sampler, writes its last batch (a capture in progress included), and closes the file. */
  async stop(): Promise<void> {
    await this.sampler?.stop();
    this.rotate();
  }
}
