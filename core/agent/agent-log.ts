// The agent's log: one JSON object per line on stdout, in pino's shape ({level, time, name, ...fields,
// msg}) so the same tools read the agent's and the cloud's logs. The agent does not load pino itself:
// it runs on every machine for months and must stay small (bench:agent-rss), and pino with its
// transports costs about 5 MB of resident memory for features the agent does not use.
import { writeSync } from 'node:fs';
import { LEVEL_VALUES } from '../config/log-levels.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LEVELS: Record<LogLevel, number> = { ...LEVEL_VALUES, silent: Infinity };

type LogFn = {
  (msg: string): void;
  (fields: Record<string, unknown>, msg?: string): void;
};

export class Logger {
  private threshold: number;

  constructor(
    level: LogLevel = 'info',
    private readonly base: Record<string, unknown> = { name: 'platform-agent' },
    private readonly sink: (line: string) => void = (line) => writeSync(1, line),
  ) {
    this.threshold = LEVELS[level];
  }

  get level(): LogLevel {
    return (Object.keys(LEVELS) as LogLevel[]).find((k) => LEVELS[k] === this.threshold) ?? 'info';
  }

  set level(level: LogLevel) {
    this.threshold = LEVELS[level];
  }

  private write(level: number, a: Record<string, unknown> | string, b?: string): void {
    if (level < this.threshold) return;
    const fields = typeof a === 'string' ? {} : a;
    const msg = typeof a === 'string' ? a : b;
    try {
      this.sink(`${JSON.stringify({ level, time: Date.now(), ...this.base, ...fields, ...(msg === undefined ? {} : { msg }) })}\n`);
    } catch {
      // A closed stdout (EPIPE) must not take the supervisor down with it.
    }
  }

  debug: LogFn = (a: Record<string, unknown> | string, b?: string) => this.write(20, a, b);
  info: LogFn = (a: Record<string, unknown> | string, b?: string) => this.write(30, a, b);
  warn: LogFn = (a: Record<string, unknown> | string, b?: string) => this.write(40, a, b);
  error: LogFn = (a: Record<string, unknown> | string, b?: string) => this.write(50, a, b);
}
