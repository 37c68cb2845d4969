// Confinement of trainers (built-in and custom) with Debian's bubblewrap. A trainer runs hostile-tenant
// code (a custom script) or reads hostile-tenant data (the built-in one), so it must not see the cloud:
// no data directory, no admin socket, no network (not even loopback: the cloud's ports listen there),
// none of the cloud's environment, and bounded CPU time, memory, processes and file sizes.
//
// Inside the sandbox a trainer sees:
//   /usr, /bin, /lib, /lib64, /sbin (read-only; python and torch), /etc/alternatives, /etc/ld.so.cache
//   /job     its job folder, writable, the working directory (dataset/ and output/ are in it)
//   /script  the custom script's package (read-only)   /trainer  the built-in trainer (read-only)
//   /tmp     a private tmpfs of bounded size; /proc of its own pid namespace; a minimal /dev
// and runs as uid/gid 65534 with an environment of only what the job needs.
//
// When the cloud runs as root, bubblewrap is started as uid/gid 65534 on the host too (a process of
// host uid 0 is exempt from RLIMIT_NPROC, so a fork bomb would not be bounded). That user cannot reach
// folders inside a private data directory, so job folders then live under a separate root that only
// lets 65534 pass through (mode 0711), each job folder 0700 owned by 65534.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, lstatSync, realpathSync } from 'node:fs';
import { chmod, lchown, mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ConfinedCommand, ProcessLimits } from './trainer-process.js';

/** The unprivileged user and group trainers run as (nobody/nogroup on Debian). */
export const sandboxUid = 65534;

export interface SandboxSettings {
  /** Path of bwrap. Default /usr/bin/bwrap, else `bwrap` on PATH. */
  bwrapPath?: string;
  /** RLIMIT_NPROC: processes and threads of the sandbox. Default 512. */
  processes?: number;
  /** RLIMIT_FSIZE: the largest file a trainer may write. Default 4 GiB. */
  fileSizeBytes?: number;
  /** Size of the private /tmp (a tmpfs, so it is memory). Default 256 MiB. */
  tmpBytes?: number;
  /** Where job folders live when the cloud runs as root (see above). Default <tmpdir>/platform-training-<hash>. */
  rootJobsFolder?: string;
}

/** The job's folders on the host, and the same folders as the trainer sees them. */
export interface JobFolders {
  /** The job's own folder on the host; removed after the run. */
  host: string;
  /** Host folders that are mounted: work (writable), script and trainer (read-only). */
  work: string;
  script: string;
  trainer: string;
  /** The paths the trainer is given for them. */
  inside: { work: string; script: string; trainer: string };
}

export interface TrainerConfinement {
  /** 'bubblewrap' or 'none' (built-in trainers only, when the operator allowed it). */
  readonly kind: 'bubblewrap' | 'none';
  /** Creates the job's folders (empty) under jobsRoot. */
  folders(jobsRoot: string, jobId: string): Promise<JobFolders>;
  /** Gives the job's files to the sandbox user once they are staged. */
  handOver(folders: JobFolders): Promise<void>;
  /** Wraps a trainer command: `command` and `args` use the inside paths. */
  wrap(command: string, args: string[], env: Record<string, string>, limits: ProcessLimits, folders: JobFolders): ConfinedCommand;
}

const defaults = { processes: 512, fileSizeBytes: 4 * 2 ** 30, tmpBytes: 256 * 2 ** 20 };
const runsAsRoot = () => process.getuid?.() === 0;

/** A program's full path: the trainer's environment has no PATH to look it up in. */
function findProgram(name: string): string {
  const folders = ['/usr/bin', '/bin', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean)];
  return folders.map((folder) => join(folder, name)).find((path) => existsSync(path)) ?? join('/usr/bin', name);
}

export function defaultBwrapPath(): string {
  return findProgram('bwrap');
}

/** The environment every trainer gets, before the job's own variables. */
function baseEnv(): Record<string, string> {
  return { PATH: '/usr/bin:/bin', HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8', PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' };
}

export class BubblewrapConfinement implements TrainerConfinement {
  readonly kind = 'bubblewrap';
  readonly bwrapPath: string;
  private readonly settings: Required<Omit<SandboxSettings, 'bwrapPath' | 'rootJobsFolder'>>;
  private readonly asRoot = runsAsRoot();
  /** bubblewrap 0.8+ can forbid user namespaces inside the sandbox (kernel attack surface); set by probe(). */
  private disableUserns = false;

  constructor(
    settings: SandboxSettings,
    /** The folder job folders go to when the cloud does not run as root. */
    private readonly jobsRoot: string,
    private readonly rootJobsFolder = settings.rootJobsFolder ??
      join(tmpdir(), `platform-training-${createHash('sha256').update(jobsRoot).digest('hex').slice(0, 12)}`),
  ) {
    this.bwrapPath = settings.bwrapPath || defaultBwrapPath();
    this.settings = {
      processes: settings.processes ?? defaults.processes,
      fileSizeBytes: settings.fileSizeBytes ?? defaults.fileSizeBytes,
      tmpBytes: settings.tmpBytes ?? defaults.tmpBytes,
    };
  }

  /** Where job folders are created: the service's work folder, or the 0711 root folder (see above). */
  get jobsFolder(): string {
    return this.asRoot ? this.rootJobsFolder : this.jobsRoot;
  }

  async folders(_jobsRoot: string, jobId: string): Promise<JobFolders> {
    const root = this.jobsFolder;
    await mkdir(root, { recursive: true });
    if (this.asRoot) await chmod(root, 0o711);
    const host = join(root, jobId);
    const folders = { host, work: join(host, 'work'), script: join(host, 'script'), trainer: join(host, 'trainer') };
    for (const folder of [folders.work, folders.script, folders.trainer]) await mkdir(folder, { recursive: true });
    await chmod(host, 0o700);
    return { ...folders, inside: { work: '/job', script: '/script', trainer: '/trainer' } };
  }

  async handOver(folders: JobFolders): Promise<void> {
    if (!this.asRoot) return;
    await chownTree(folders.host, sandboxUid, sandboxUid);
  }

  wrap(command: string, args: string[], env: Record<string, string>, limits: ProcessLimits, folders: JobFolders): ConfinedCommand {
    const rlimits = [`--nproc=${this.settings.processes}`, `--fsize=${this.settings.fileSizeBytes}`, '--core=0'];
    // Soft CPU limit sends SIGXCPU (reported as the CPU limit); the hard one, 5 s later, SIGKILL.
    if (limits.cpuSeconds) rlimits.push(`--cpu=${Math.ceil(limits.cpuSeconds)}:${Math.ceil(limits.cpuSeconds) + 5}`);
    if (limits.memoryBytes) rlimits.push(`--as=${Math.ceil(limits.memoryBytes)}`);
    const fullEnv = { ...baseEnv(), ...env };
    return {
      command: findProgram('prlimit'),
      args: [...rlimits, '--', this.bwrapPath, ...this.bwrapArgs(folders, fullEnv), '--', command, ...args],
      env: {},
      ...(this.asRoot ? { uid: sandboxUid, gid: sandboxUid } : {}),
    };
  }

  /** The bubblewrap options; exported for the probe, which runs the same sandbox. */
  bwrapArgs(folders: Pick<JobFolders, 'work' | 'script' | 'trainer' | 'inside'>, env: Record<string, string>): string[] {
    // No --new-session: the trainer is started detached (its own session, no terminal to inject into),
    // and staying in bwrap's process group lets cancel signal it (TrainerProcess).
    const args = [
      '--unshare-all',
      '--unshare-user',
      ...(this.disableUserns ? ['--disable-userns'] : []),
      '--die-with-parent',
      '--uid',
      String(sandboxUid),
      '--gid',
      String(sandboxUid),
    ];
    args.push('--hostname', 'trainer', '--clearenv');
    for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
    args.push('--ro-bind', '/usr', '/usr');
    // Merged-/usr systems have these as links into /usr; older layouts have real folders.
    for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
      const stat = lstatSync(top, { throwIfNoEntry: false });
      if (stat?.isSymbolicLink()) args.push('--symlink', realpathSync(top).replace(/^\//, ''), top);
      else if (stat?.isDirectory()) args.push('--ro-bind', top, top);
    }
    // BLAS and friends are chosen through /etc/alternatives; ld.so.cache finds the libraries faster.
    args.push('--ro-bind-try', '/etc/alternatives', '/etc/alternatives', '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache');
    args.push('--proc', '/proc', '--dev', '/dev', '--size', String(this.settings.tmpBytes), '--tmpfs', '/tmp');
    args.push('--bind', folders.work, folders.inside.work);
    args.push('--ro-bind', folders.script, folders.inside.script, '--ro-bind', folders.trainer, folders.inside.trainer);
    // Nothing else is writable: the sandbox's own root folder becomes read-only.
    args.push('--chdir', folders.inside.work, '--remount-ro', '/');
    return args;
  }

  /**
   * Starts a python that does nothing inside the same sandbox: undefined when that works, else why
   * not (bwrap missing, user namespaces disabled, the python unreachable as the sandbox user).
   */
  async probe(python: string): Promise<string | undefined> {
    try {
      if (this.bwrapPath.includes('/')) accessSync(this.bwrapPath, constants.X_OK);
    } catch {
      return `bubblewrap is not installed at ${this.bwrapPath} (Debian: apt-get install bubblewrap, or set PLATFORM_TRAINING_BWRAP)`;
    }
    const help = await run({ command: this.bwrapPath, args: ['--help'], env: {} }, 10_000);
    this.disableUserns = help.output.includes('--disable-userns');
    const folders = await this.folders('', `probe-${process.pid}-${Date.now()}`);
    try {
      await this.handOver(folders);
      const wrapped = this.wrap(python, ['-c', 'import sys; sys.exit(0)'], {}, { wallSeconds: 60 }, folders);
      const result = await run(wrapped, 60_000);
      return result.code === 0 ? undefined : `bubblewrap could not start a confined trainer (exit ${result.code}): ${result.output.trim().slice(-500)}`;
    } finally {
      await rm(folders.host, { recursive: true, force: true });
    }
  }
}

/** No confinement: built-in trainers only, when the operator set PLATFORM_TRAINING_UNCONFINED=1. */
export class NoConfinement implements TrainerConfinement {
  readonly kind = 'none';

  async folders(jobsRoot: string, jobId: string): Promise<JobFolders> {
    const host = join(jobsRoot, jobId);
    const folders = { host, work: join(host, 'work'), script: join(host, 'script'), trainer: join(host, 'trainer') };
    for (const folder of [folders.work, folders.script, folders.trainer]) await mkdir(folder, { recursive: true });
    return { ...folders, inside: { work: folders.work, script: folders.script, trainer: folders.trainer } };
  }

  async handOver(): Promise<void> {}

  wrap(command: string, args: string[], env: Record<string, string>, limits: ProcessLimits): ConfinedCommand {
    const ulimits: string[] = [];
    if (limits.cpuSeconds) ulimits.push(`ulimit -t ${Math.ceil(limits.cpuSeconds)}`);
    if (limits.memoryBytes) ulimits.push(`ulimit -v ${Math.ceil(limits.memoryBytes / 1024)}`);
    return { command: '/bin/sh', args: ['-c', [...ulimits, 'exec "$@"'].join(' && '), 'trainer', command, ...args], env: { ...baseEnv(), ...env } };
  }
}

async function chownTree(folder: string, uid: number, gid: number): Promise<void> {
  await lchown(folder, uid, gid);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) await chownTree(path, uid, gid);
    else await lchown(path, uid, gid);
  }
}

/** Runs a short command; `output` is the end of its stdout and stderr together. */
function run(command: ConfinedCommand, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command.command, command.args, {
      env: command.env,
      uid: command.uid,
      gid: command.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('error', (err) => resolve({ code: null, output: err.message }));
    child.once('close', (code) => resolve({ code, output }));
  });
}
