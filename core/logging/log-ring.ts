// The runtime's recent log lines, for RobotService.StreamLogs (the control page's live logs, grpcurl): a
// bounded ring fed by a tap on the log sink, and the live subscribers that follow new lines. Memory stays
// bounded twice over: the ring keeps the last `capacity` lines, and a subscriber that cannot keep up
// loses its oldest unsent lines rather than growing a queue without end.
import type { LevelName } from '../config/log-levels.js';
import { enabled, type LogSink, type SinkRecord } from './sink.js';

export interface RingLine {
  time: number;
  level: LevelName;
  logger: string;
  message: string;
  fields?: Record<string, unknown>;
}

export interface LogSubscription {
  /** Stops delivery; safe to call more than once. */
  close(): void;
}

/** How many unsent lines one subscriber may hold before its oldest are dropped. */
const SUBSCRIBER_QUEUE = 1000;

interface Subscriber {
  minLevel: LevelName;
  queue: RingLine[];
  dropped: number;
  scheduled: boolean;
  deliver(lines: RingLine[], dropped: number): void;
  end(): void;
}

export class LogRing {
  private readonly lines: (RingLine | undefined)[];
  /** Index of the next slot to write; the ring is full once `count` reaches capacity. */
  private next = 0;
  private count = 0;
  private readonly subscribers = new Set<Subscriber>();
  private closed = false;

  constructor(readonly capacity = 1000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity: must be a positive integer, got ${capacity}`);
    this.lines = new Array<RingLine | undefined>(capacity);
  }

  /** A ring that receives every line the sink writes from now on. */
  static tapping(sink: LogSink, capacity?: number): LogRing {
    const ring = new LogRing(capacity);
    sink.tap((record, time) => ring.add(record, time));
    return ring;
  }

  add(record: SinkRecord, time: number): void {
    const line: RingLine = { time, level: record.level, logger: record.logger, message: record.message, fields: record.fields };
    this.lines[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
    for (const s of this.subscribers) {
      if (!enabled(line.level, s.minLevel)) continue;
      s.queue.push(line);
      if (s.queue.length > SUBSCRIBER_QUEUE) {
        s.queue.shift();
        s.dropped++;
      }
      // Delivered on a later turn: the sink's taps must not re-enter a logger, and a burst goes out as one batch.
      if (!s.scheduled) {
        s.scheduled = true;
        setImmediate(() => this.flush(s));
      }
    }
  }

  /** The most recent `limit` lines at or above `minLevel`, oldest first. */
  recent(minLevel: LevelName, limit: number): RingLine[] {
    const out: RingLine[] = [];
    for (let i = 1; i <= this.count && out.length < limit; i++) {
      const line = this.lines[(this.next - i + this.capacity) % this.capacity]!;
      if (enabled(line.level, minLevel)) out.push(line);
    }
    return out.reverse();
  }

  /**
   * Delivers every new line at or above `minLevel` in batches, with the number of lines dropped because
   * the subscriber fell behind; `end` is called when the ring closes (the runtime shuts down).
   */
  subscribe(minLevel: LevelName, deliver: (lines: RingLine[], dropped: number) => void, end: () => void): LogSubscription {
    if (this.closed) {
      end();
      return { close: () => undefined };
    }
    const s: Subscriber = { minLevel, queue: [], dropped: 0, scheduled: false, deliver, end };
    this.subscribers.add(s);
    return { close: () => void this.subscribers.delete(s) };
  }

  private flush(s: Subscriber): void {
    s.scheduled = false;
    if (!this.subscribers.has(s) || s.queue.length === 0) return;
    const lines = s.queue;
    const dropped = s.dropped;
    s.queue = [];
    s.dropped = 0;
    s.deliver(lines, dropped);
  }

  /** Ends every subscription (their pending lines are delivered first). */
  close(): void {
    this.closed = true;
    for (const s of this.subscribers) {
      this.flush(s);
      s.end();
    }
    this.subscribers.clear();
  }
}
