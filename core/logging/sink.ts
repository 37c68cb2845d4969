// Where every log line of the runtime ends up: the main thread's own loggers and the driver workers'
// forwarded records all pass through one sink, which deduplicates noisy messages and writes JSON lines
// with pino to stdout and, with -log-file, to a rotating file.
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { InjectionToken } from 'tsyringe';
import type { DriverLogger } from '../../plugins/contract.js';
import { Deduplicator } from './dedup.js';
import { RotatingLogFile } from './log-file.js';
import { LEVEL_NAMES, type LevelName } from '../config/log-levels.js';

export interface SinkRecord {
  level: LevelName;
  logger: string;
  message: string;
  fields?: Record<string, unknown>;
}

export interface LogSinkOptions {
  /** Defaults to stdout; tests pass a stream to read the lines back. */
  destination?: NodeJS.WritableStream;
  /** Rotating log file (-log-file). */
  logFile?: string;
  deduplicate?: boolean;
}

/** The DI token of the runtime's one LogSink (its constructor is private: use LogSink.create). */
export const LOG_SINK: InjectionToken<LogSink> = 'LogSink';

const RANK: Record<LevelName, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export const enabled = (level: LevelName, threshold: LevelName): boolean => RANK[level] >= RANK[threshold];

export class LogSink {
  private readonly dedup = new Deduplicator();
  private readonly sweeper: NodeJS.Timeout;
  private deduplicate: boolean;
  private taps: ((record: SinkRecord, time: number) => void)[] = [];

  private constructor(
    private readonly root: Logger,
    private readonly file: Writable | undefined,
    deduplicate: boolean,
  ) {
    this.deduplicate = deduplicate;
    this.sweeper = setInterval(() => this.reportSuppressed(Date.now()), 1000).unref();
  }

  static async create(options: LogSinkOptions = {}): Promise<LogSink> {
    const streams: pino.StreamEntry[] = [{ level: 'debug', stream: options.destination ?? pino.destination({ dest: 1, sync: true }) }];
    let file: Writable | undefined;
    if (options.logFile) {
      // Written to the named file, rotated by size to numbered siblings (core/logging/log-file.ts).
      file = new RotatingLogFile(options.logFile);
      streams.push({ level: 'debug', stream: file });
    }
    const root = pino({ level: 'debug', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams));
    return new LogSink(root, file, options.deduplicate ?? true);
  }

  setDeduplicate(on: boolean): void {
    this.deduplicate = on;
  }

  /**
   * Also hands every line written from now on to `fn` (after deduplication), e.g. to ship it to the
   * cloud. `fn` must not throw and must not log synchronously.
   */
  tap(fn: (record: SinkRecord, time: number) => void): void {
    this.taps.push(fn);
  }

  private emit(record: SinkRecord): void {
    this.root[record.level]({ logger: record.logger, ...record.fields }, record.message);
    if (this.taps.length) {
      const now = Date.now();
      for (const fn of this.taps) fn(record, now);
    }
  }

  /** Writes a record whose level was already checked against its logger's threshold. */
  write(record: SinkRecord): void {
    if (this.deduplicate) {
      const verdict = this.dedup.check(JSON.stringify([record.logger, record.level, record.message]), Date.now());
      if (verdict.action === 'drop') return;
      if (verdict.action === 'notice') {
        this.emit({
          level: record.level,
          logger: record.logger,
          fields: { deduplicated: true },
          message: `suppressing repeats of a noisy message (logged 3 times in 10 s): ${record.message}`,
        });
        return;
      }
    }
    this.emit(record);
  }

  private reportSuppressed(now: number): void {
    for (const { key, count } of this.dedup.sweep(now)) {
      const [logger, level, message] = JSON.parse(key) as [string, LevelName, string];
      this.emit({ level, logger, fields: { deduplicated: true, suppressed: count }, message: `${message} (repeated ${count} more times in the last 10 s)` });
    }
  }

  /** A main-thread logger whose threshold is looked up on each call, so level changes apply at once. */
  logger(name: string, threshold: () => LevelName, fields?: Record<string, unknown>): DriverLogger {
    const emit = (level: LevelName) => (message: string, extra?: Record<string, unknown>) => {
      if (enabled(level, threshold())) this.write({ level, logger: name, message, fields: { ...fields, ...extra } });
    };
    return Object.fromEntries(LEVEL_NAMES.map((l) => [l, emit(l)])) as unknown as DriverLogger;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.reportSuppressed(Number.POSITIVE_INFINITY);
    if (this.file) await new Promise<void>((resolve) => this.file!.end(resolve));
  }
}
