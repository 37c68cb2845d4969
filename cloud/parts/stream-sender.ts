// Sending to a server stream whose client may read slowly or not at all (TailRobotPartLogs; issue 27,
// finding 7). grpc-js buffers every write a handler makes, so a tail that never read grew the cloud by
// every log entry its part uploaded: 40 such streams took it to 6.1 GB. Here write() returning false is
// respected (the rest waits for 'drain'), what waits is bounded in bytes per stream, and a stream that
// falls further behind is closed with RESOURCE_EXHAUSTED naming the limit.
import { resourceExhausted } from '../../core/serving/status-error.js';
import { envWholeNumber } from '../../core/serving/env.js';

/** The part of a grpc-js ServerWritableStream this needs. */
export interface WritableCall<M> {
  write(message: M): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

export const defaultMaxQueuedBytes = 4 * 1024 * 1024;
/** Entries are sent in messages of about this size, so each of grpc-js' 16 buffered messages stays small. */
export const messageBytes = 16 * 1024;

/** PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES: the bytes of entries one tail may have waiting. */
export function maxQueuedBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber('PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES', defaultMaxQueuedBytes, env);
}

/**
 * A queue in front of a stream: `push` adds items and sends what the stream takes; the rest waits for
 * 'drain'. When more than maxQueuedBytes wait, the queue is dropped and `overflow` is called once with the
 * error to end the stream with; later pushes are ignored.
 */
export class BoundedSender<T, M> {
  private queue: { item: T; bytes: number }[] = [];
  private queuedBytes = 0;
  private waiting = false;
  private stopped = false;

  constructor(
    private readonly call: WritableCall<M>,
    /** One message of the stream from a batch of items. */
    private readonly pack: (items: T[]) => M,
    private readonly sizeOf: (item: T) => number,
    private readonly maxQueuedBytes: number,
    private readonly overflow: (err: Error) => void,
    private readonly what: string,
  ) {}

  /** Bytes waiting to be handed to the stream (not counting grpc-js' own buffer of at most 16 messages). */
  get waitingBytes(): number {
    return this.queuedBytes;
  }

  push(items: readonly T[]): void {
    if (this.stopped) return;
    for (const item of items) {
      const bytes = this.sizeOf(item);
      this.queue.push({ item, bytes });
      this.queuedBytes += bytes;
      // Past the limit the stream is closed anyway: the rest of a large batch is not queued first.
      if (this.queuedBytes > this.maxQueuedBytes) {
        this.send();
        if (this.queuedBytes > this.maxQueuedBytes) break;
      }
    }
    this.send();
    if (this.queuedBytes > this.maxQueuedBytes) {
      const waiting = this.queuedBytes;
      this.stop();
      this.overflow(
        resourceExhausted(
          `${this.what}: the client reads too slowly: ${waiting} bytes of entries waited to be sent, more than the ${this.maxQueuedBytes}-byte limit (PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES); the stream is closed, open it again (GetRobotPartLogs returns what was missed)`,
        ),
      );
    }
  }

  /** Drops what waits and ignores later pushes (the stream ended). */
  stop(): void {
    this.stopped = true;
    this.queue = [];
    this.queuedBytes = 0;
  }

  private send(): void {
    while (!this.waiting && !this.stopped && this.queue.length > 0) {
      let size = 0;
      let count = 0;
      while (count < this.queue.length && (count === 0 || size + this.queue[count].bytes <= messageBytes)) size += this.queue[count++].bytes;
      const batch = this.queue.splice(0, count);
      this.queuedBytes -= size;
      if (!this.call.write(this.pack(batch.map((b) => b.item)))) {
        this.waiting = true;
        this.call.once('drain', () => {
          this.waiting = false;
          this.send();
        });
      }
    }
  }
}
