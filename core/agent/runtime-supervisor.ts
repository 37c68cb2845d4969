// Keeps platform-server running: start detection through the `serving` line, a start timeout that
// kills and restarts it, prompt restarts after a crash with exponential backoff, graceful stops.
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import type { Logger } from './agent-log.js';
import { RuntimeProcess, type RuntimeLaunch } from './runtime-process.js';
import type { TimeScale } from './time-scale.js';

export type RuntimeState = 'stopped' | 'starting' | 'serving' | 'backoff' | 'stopping';

/** First restart after a crash comes 1 s later, then 2, 4, ... at most 60 s. */
export const CRASH_BACKOFF_SECONDS = { first: 1, max: 60 };
/** A runtime that served this long is healthy again: its next crash restarts after the first delay. */
export const HEALTHY_AFTER_MINUTES = 1;
/** Time between SIGTERM and SIGKILL. */
export const STOP_GRACE_SECONDS = 30;

export interface RuntimeSupervisorOptions {
  time: TimeScale;
  logger: Logger;
  output: { stdout: Writable; stderr: Writable };
  /** Called before each start: the binary and env may have changed since the last one. */
  launch: () => Promise<RuntimeLaunch | undefined>;
  startTimeoutMinutes: () => number;
}

interface SupervisorEvents {
  spawn: [process: RuntimeProcess];
  serving: [address: string];
  exit: [code: number | null, signal: NodeJS.Signals | null, expected: boolean];
  'start-timeout': [];
}

export class RuntimeSupervisor extends EventEmitter<SupervisorEvents> {
  state: RuntimeState = 'stopped';
  current?: RuntimeProcess;
  crashes = 0;
  starts = 0;
  private wanted = false;
  private timer?: NodeJS.Timeout;
  private servingSince = 0;
  private transition: Promise<void> = Promise.resolve();

  constructor(private readonly opts: RuntimeSupervisorOptions) {
    super();
  }

  get running(): boolean {
    return this.current !== undefined && !this.current.exited;
  }

  /** Starts the runtime if it is not running. */
  start(): Promise<void> {
    this.wanted = true;
    return this.serialize(async () => {
      if (!this.running && this.state !== 'backoff') await this.spawnNow();
    });
  }

  /** Stops the runtime (SIGTERM, then SIGKILL after the grace period) and keeps it stopped. */
  stop(): Promise<void> {
    this.wanted = false;
    return this.serialize(() => this.stopCurrent());
  }

  /** Stops and starts again at once (no backoff): for env, version and start-timeout restarts. */
  restart(reason: string): Promise<void> {
    this.wanted = true;
    return this.serialize(async () => {
      this.opts.logger.info({ reason }, 'restarting platform-server');
      await this.stopCurrent();
      await this.spawnNow();
    });
  }

  /** Retries a start that found nothing to launch (e.g. once a binary has been installed). */
  poke(): Promise<void> {
    return this.wanted ? this.start() : Promise.resolve();
  }

  private serialize(step: () => Promise<void>): Promise<void> {
    this.transition = this.transition.then(step, step);
    return this.transition;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async stopCurrent(): Promise<void> {
    this.clearTimer();
    const proc = this.current;
    if (!proc || proc.exited) {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    this.opts.logger.info({ pid: proc.pid }, 'stopping platform-server');
    await proc.stop(this.opts.time.seconds(STOP_GRACE_SECONDS));
    this.state = 'stopped';
  }

  private async spawnNow(): Promise<void> {
    this.clearTimer();
    if (!this.wanted) {
      this.opts.logger.debug('supervision: platform-server is not wanted (stopped or disabled); not starting it');
      return;
    }
    const launch = await this.opts.launch();
    if (!launch) {
      this.state = 'stopped';
      this.opts.logger.warn('platform-server is not installed yet; it starts once a version is installed');
      return;
    }
    const proc = new RuntimeProcess(launch, this.opts.output);
    this.current = proc;
    this.starts++;
    this.state = 'starting';
    this.opts.logger.info({ pid: proc.pid, binary: launch.binary, args: launch.args }, 'started platform-server');
    const timeoutMinutes = this.opts.startTimeoutMinutes();
    this.opts.logger.debug({ pid: proc.pid, start_timeout_minutes: timeoutMinutes }, 'supervision: waiting for the serving line');
    this.timer = setTimeout(() => this.onStartTimeout(proc, timeoutMinutes), this.opts.time.minutes(timeoutMinutes));
    proc.on('serving', (address) => {
      if (this.current !== proc) return;
      this.clearTimer();
      this.state = 'serving';
      this.servingSince = Date.now();
      this.opts.logger.info({ pid: proc.pid, address }, 'platform-server is serving');
      this.emit('serving', address);
    });
    proc.on('exit', (code, signal) => this.onExit(proc, code, signal));
    this.emit('spawn', proc);
  }

  private onStartTimeout(proc: RuntimeProcess, minutes: number): void {
    if (this.current !== proc || proc.exited) return;
    this.opts.logger.warn({ pid: proc.pid, minutes }, 'platform-server did not start in time; killing and restarting it');
    this.emit('start-timeout');
    void this.restart(`no serving line within ${minutes} minute(s)`);
  }

  private onExit(proc: RuntimeProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const expected = proc.stopRequested;
    this.emit('exit', code, signal, expected);
    if (this.current !== proc || expected) {
      this.opts.logger.debug(
        { pid: proc.pid, code, signal, expected, current: this.current === proc },
        'supervision: platform-server exited as asked (or was replaced); no restart',
      );
      return;
    }
    this.clearTimer();
    const healthy = this.state === 'serving' && Date.now() - this.servingSince >= this.opts.time.minutes(HEALTHY_AFTER_MINUTES);
    this.crashes = healthy ? 1 : this.crashes + 1;
    this.opts.logger.debug(
      { pid: proc.pid, served_seconds: this.state === 'serving' ? Math.round((Date.now() - this.servingSince) / 1000) : 0, healthy, crashes: this.crashes },
      healthy
        ? 'supervision: it had served long enough to count as healthy; the backoff starts over'
        : 'supervision: it crashed before counting as healthy; the backoff grows',
    );
    const delaySeconds = Math.min(CRASH_BACKOFF_SECONDS.first * 2 ** (this.crashes - 1), CRASH_BACKOFF_SECONDS.max);
    const reason = proc.spawnError ? proc.spawnError.message : `exit code ${code}, signal ${signal}`;
    this.opts.logger.error({ pid: proc.pid, reason, crashes: this.crashes, delaySeconds }, 'platform-server exited unexpectedly; restarting');
    if (!this.wanted) {
      this.state = 'stopped';
      return;
    }
    this.state = 'backoff';
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.serialize(async () => {
        if (this.state === 'backoff' && this.wanted) await this.spawnNow();
      });
    }, this.opts.time.seconds(delaySeconds));
  }
}
