// Runs a trainer (the built-in PyTorch script or a custom one) as a child process in its own process
// group, under resource limits, and turns its output into events. Cancel and timeouts end the whole
// group (SIGTERM, then SIGKILL after a grace period), so a script's own children go too. When the
// leader exits, whatever it left in its group is killed as well.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { constants } from 'node:os';
import { isLevelName } from '../../core/config/log-levels.js';
import { eachLine, OrderedEvents } from './trainer-output.js';
import { readProcStat } from '../../core/serving/proc-stat.js';

export interface ProcessLimits {
  /** Wall-clock limit; past it the group is ended and the job fails with DEADLINE_EXCEEDED. */
  wallSeconds: number;
  /** RLIMIT_CPU (ulimit -t); the kernel ends the process past it. */
  cpuSeconds?: number;
  /** RLIMIT_AS (ulimit -v): address space in bytes. */
  memoryBytes?: number;
}

/** A command with its confinement applied (trainer-sandbox.ts): the command with the confinement already applied. */
export interface ConfinedCommand {
  command: string;
  args: string[];
  /** The complete environment of the started process (nothing is inherited). */
  env: Record<string, string>;
  uid?: number;
  gid?: number;
}

export interface TrainerProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  limits: ProcessLimits;
  /** Time between SIGTERM and SIGKILL. Default 5 s. */
  killGraceMs?: number;
  /**
   * The command as a TrainerConfinement wrapped it (trainer-sandbox.ts): started exactly so, with its own
   * complete environment and user; `command`, `args`, `env` and the rlimits above are then already in it.
   */
  confined?: ConfinedCommand;
}

export type TrainerEvent =
  | { kind: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; message: string }
  | {
      kind: 'progress';
      epoch: number;
      totalEpochs: number;
      loss: number;
      metricName: string;
      metric: number;
      imagesPerSecond: number;
      elapsedSeconds: number;
    }
  | { kind: 'metrics'; metrics: Record<string, number> };

export interface TrainerOutcome {
  ending: 'exited' | 'canceled' | 'timed-out' | 'over-limit' | 'spawn-failed';
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines of stderr, to say why a trainer failed. */
  stderrTail: string[];
  spawnError?: string;
}

const stderrTailLines = 15;

/** Parses one stdout line of the protocol in python/platform_training/protocol.py. */
export function parseTrainerLine(line: string): TrainerEvent {
  if (line.startsWith('{')) {
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      const num = (k: string) => (typeof value[k] === 'number' ? (value[k] as number) : 0);
      if (value.event === 'progress') {
        return {
          kind: 'progress',
          epoch: num('epoch'),
          totalEpochs: num('total_epochs'),
          loss: num('loss'),
          metricName: typeof value.metric_name === 'string' ? value.metric_name : '',
          metric: num('metric'),
          imagesPerSecond: num('images_per_second'),
          elapsedSeconds: num('elapsed_seconds'),
        };
      }
      if (value.event === 'metrics' && value.metrics && typeof value.metrics === 'object') {
        const metrics: Record<string, number> = {};
        for (const [k, v] of Object.entries(value.metrics)) if (typeof v === 'number' && Number.isFinite(v)) metrics[k] = v;
        return { kind: 'metrics', metrics };
      }
      if (value.event === 'log' && typeof value.message === 'string') {
        return { kind: 'log', level: isLevelName(value.level) ? value.level : 'info', message: value.message };
      }
    } catch {
      // Not protocol JSON: kept as a plain log line below.
    }
  }
  return { kind: 'log', level: 'info', message: line };
}

/** Wraps the command in sh so that the limits apply to it and everything it starts. */
function limitedCommand(spec: TrainerProcessSpec): string[] {
  const limits: string[] = [];
  if (spec.limits.cpuSeconds) limits.push(`ulimit -t ${Math.ceil(spec.limits.cpuSeconds)}`);
  if (spec.limits.memoryBytes) limits.push(`ulimit -v ${Math.ceil(spec.limits.memoryBytes / 1024)}`);
  return ['-c', [...limits, 'exec "$@"'].join(' && '), 'trainer', spec.command, ...spec.args];
}

function signalNamed(number: number): NodeJS.Signals | undefined {
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(([, n]) => n === number)?.[0];
}

export class TrainerProcess {
  readonly done: Promise<TrainerOutcome>;
  private readonly child: ChildProcess;
  /** The trainer's events, handled in order (exposed for tests: its largest backlog). */
  readonly events: OrderedEvents<TrainerEvent>;
  private ending: TrainerOutcome['ending'] = 'exited';
  private killTimer?: NodeJS.Timeout;
  private wallTimer?: NodeJS.Timeout;

  constructor(
    private readonly spec: TrainerProcessSpec,
    /** Called for each event in the order written, one at a time: the next waits for a returned promise. */
    onEvent: (event: TrainerEvent) => void | Promise<void>,
  ) {
    const stderrTail: string[] = [];
    const confined = spec.confined;
    this.child = spawn(confined ? confined.command : '/bin/sh', confined ? confined.args : limitedCommand(spec), {
      cwd: spec.cwd,
      env: confined ? confined.env : { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', ...spec.env },
      uid: confined?.uid,
      gid: confined?.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, which cancel and timeouts end as a whole
    });
    const events = new OrderedEvents(onEvent, [this.child.stdout!, this.child.stderr!]);
    this.events = events;
    eachLine(this.child.stdout!, (line) => events.push(parseTrainerLine(line)), events);
    eachLine(
      this.child.stderr!,
      (line) => {
        stderrTail.push(line);
        if (stderrTail.length > stderrTailLines) stderrTail.shift();
        events.push({ kind: 'log', level: 'warn', message: line });
      },
      events,
    );
    this.wallTimer = setTimeout(() => this.stop('timed-out'), spec.limits.wallSeconds * 1000);
    this.done = new Promise((resolve) => {
      let spawnError: string | undefined;
      this.child.once('error', (err) => {
        spawnError = err.message;
        this.ending = 'spawn-failed';
      });
      this.child.once('exit', () => this.killGroup('SIGKILL'));
      this.child.once('close', (exitCode, signal) => {
        clearTimeout(this.wallTimer);
        clearTimeout(this.killTimer);
        // bubblewrap reports a trainer killed by a signal as exit code 128 + the signal's number.
        if (confined && signal === null && exitCode !== null && exitCode > 128) signal = signalNamed(exitCode - 128) ?? null;
        // Resolved once every event was handled too.
        void events.drained().then(() => resolve({ ending: this.ending, exitCode, signal, stderrTail, spawnError }));
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Ends the whole process group; the outcome's ending says canceled. */
  cancel(): void {
    this.stop('canceled');
  }

  /** Ends the whole process group because the trainer passed a limit the caller watches (disk). */
  stopOverLimit(): void {
    this.stop('over-limit');
  }

  private stop(ending: 'canceled' | 'timed-out' | 'over-limit'): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null || this.killTimer) return;
    this.ending = ending;
    // bubblewrap dies at SIGTERM and takes the sandbox with it at once; the trainer's grace period
    // comes from signalling everything in the group but bubblewrap itself.
    if (this.spec.confined) this.signalGroupMembers('SIGTERM');
    else this.killGroup('SIGTERM');
    this.killTimer = setTimeout(() => this.killGroup('SIGKILL'), this.spec.killGraceMs ?? 5_000);
  }

  /** Signals every process of the trainer's group except its leader (bwrap), from /proc. */
  private signalGroupMembers(signal: NodeJS.Signals): void {
    const leader = this.child.pid;
    if (!leader) return;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === leader) continue;
      try {
        if (readProcStat(entry)?.group === leader) process.kill(Number(entry), signal);
      } catch {
        // gone meanwhile
      }
    }
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (!this.child.pid) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }
}
