// forward_system_logs: the agent follows the system journal (`journalctl -f -o json`) and writes the
// records it selects into its own log, which the service's log path carries on. The setting is a
// comma-separated list of journal identifiers (SYSLOG_IDENTIFIER or the systemd unit, with or without
// `.service`); `-name` excludes one, `all` selects every identifier not excluded. A record also has to
// reach the agent's log level. The agent's own records are never forwarded: they would loop back.
import type { Logger, LogLevel } from '../agent-log.js';
import type { CommandRunner, CommandStream } from './command-runner.js';

export interface JournalRecord {
  message: string;
  identifier: string;
  unit: string;
  priority: number;
  pid?: number;
  /** Microseconds since the epoch, as the journal gives it. */
  realtimeMicros?: string;
}

export interface ForwardFilter {
  all: boolean;
  include: Set<string>;
  exclude: Set<string>;
}

/** Parses forward_system_logs (already validated by the agent config schema). Empty means off. */
export function parseForwardFilter(setting: string): ForwardFilter | undefined {
  const parts = setting
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) return undefined;
  const filter: ForwardFilter = { all: false, include: new Set(), exclude: new Set() };
  for (const p of parts) {
    if (p === 'all') filter.all = true;
    else if (p.startsWith('-')) filter.exclude.add(p.slice(1));
    else filter.include.add(p);
  }
  // Only exclusions ("-cron") means everything else.
  if (filter.include.size === 0) filter.all = true;
  return filter;
}

// The journal exports a field that is not valid UTF-8 as an array of bytes.
function fieldText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((b) => typeof b === 'number')) return Buffer.from(value as number[]).toString('utf8');
  return undefined;
}

/** One line of `journalctl -o json`; undefined for a line that is not a journal record. */
export function parseJournalLine(line: string): JournalRecord | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!doc || typeof doc !== 'object') return undefined;
  const r = doc as Record<string, unknown>;
  const message = fieldText(r.MESSAGE);
  if (message === undefined) return undefined;
  const priority = Number(fieldText(r.PRIORITY) ?? 6);
  const pid = Number(fieldText(r._PID));
  return {
    message,
    identifier: fieldText(r.SYSLOG_IDENTIFIER) ?? '',
    unit: fieldText(r._SYSTEMD_UNIT) ?? '',
    priority: Number.isInteger(priority) && priority >= 0 && priority <= 7 ? priority : 6,
    pid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
    realtimeMicros: fieldText(r.__REALTIME_TIMESTAMP),
  };
}

/** syslog priority → the agent's level: 0-3 error, 4 warning, 5-6 info, 7 debug. */
export function levelOfPriority(priority: number): Exclude<LogLevel, 'silent'> {
  if (priority <= 3) return 'error';
  if (priority === 4) return 'warn';
  if (priority <= 6) return 'info';
  return 'debug';
}

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity };
export const AGENT_UNIT = 'platform-agent.service';

function namesOf(record: JournalRecord): string[] {
  const names = [record.identifier, record.unit].filter(Boolean);
  if (record.unit.endsWith('.service')) names.push(record.unit.slice(0, -'.service'.length));
  return names;
}

export function selectRecord(record: JournalRecord, filter: ForwardFilter, level: LogLevel, ownPid: number): boolean {
  if (record.pid === ownPid || record.unit === AGENT_UNIT) return false;
  if (LEVEL_ORDER[levelOfPriority(record.priority)] < LEVEL_ORDER[level]) return false;
  const names = namesOf(record);
  if (names.some((n) => filter.exclude.has(n))) return false;
  return filter.all || names.some((n) => filter.include.has(n));
}

export interface LogForwarderOptions {
  runner: CommandRunner;
  logger: Logger;
  setting: string;
  /** Excluded as the agent's own records; default this process. */
  ownPid?: number;
  /** The command that yields journal JSON lines; default `journalctl -f -o json -n 0` (new records only). */
  command?: [string, string[]];
  /** Pause before following the journal again after journalctl ended on its own (default 10 s). */
  retryMs?: number;
}

/** Follows the journal while started; counts what it forwarded for tests and debugging. */
export class LogForwarder {
  forwarded = 0;
  private stream?: CommandStream;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  private readonly retryMs: number;
  private readonly filter?: ForwardFilter;

  constructor(private readonly opts: LogForwarderOptions) {
    this.filter = parseForwardFilter(opts.setting);
    this.retryMs = opts.retryMs ?? 10_000;
  }

  get setting(): string {
    return this.opts.setting;
  }

  /** Starts following the journal; a setting that selects nothing starts nothing. */
  start(): CommandStream | undefined {
    if (!this.filter || this.stream || this.stopped) return this.stream;
    const [cmd, args] = this.opts.command ?? ['journalctl', ['-f', '-o', 'json', '-n', '0']];
    const stream = this.opts.runner.stream(cmd, args, (line) => this.onLine(line));
    this.stream = stream;
    void stream.exited.then((code) => {
      if (this.stream !== stream) return; // stopped on purpose
      // journalctl ended on its own (journald restarted, say): follow again after a pause.
      this.stream = undefined;
      this.opts.logger.warn({ code, retry_ms: this.retryMs }, 'log forwarding: journalctl ended; following the journal again shortly');
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.start();
      }, this.retryMs);
    });
    return stream;
  }

  async stop(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    this.stopped = true;
    const s = this.stream;
    this.stream = undefined;
    await s?.stop();
  }

  private onLine(line: string): void {
    const record = parseJournalLine(line);
    const { logger } = this.opts;
    if (!record || !this.filter || !selectRecord(record, this.filter, logger.level, this.opts.ownPid ?? process.pid)) return;
    this.forwarded++;
    const time = record.realtimeMicros ? Math.floor(Number(record.realtimeMicros) / 1000) : undefined;
    logger[levelOfPriority(record.priority)](
      { journal: { identifier: record.identifier || undefined, unit: record.unit || undefined, pid: record.pid, time } },
      record.message,
    );
  }
}
