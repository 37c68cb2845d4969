// Test and benchmark helper: spawns one of the platform's programs and resolves once it prints its
// `serving` line (DESIGN.md: "Once it serves, it prints one line containing `serving` and its address").
// platform-server, platform-cloud, the agent's fake runtimes and the benchmarks' anchors all print it,
// so this one helper starts each of them. It lives in core/serving/ because the cloud's tests use it too.
import { spawn, type ChildProcess } from 'node:child_process';

export interface ServingProgram {
  /** The address printed after `serving` (group 1 of `servingLine`). */
  address: string;
  child: ChildProcess;
  /** Everything the program printed so far, stdout and stderr interleaved as they arrived. */
  output(): string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, no cleanup: for durability tests. */
  kill9(): Promise<number | null>;
}

export interface SpawnServingOptions {
  /** The program's name, for errors. */
  name: string;
  env?: NodeJS.ProcessEnv;
  /** Node's own flags before the script (for example --import tsx, --expose-gc). */
  nodeFlags?: string[];
  /** The line to wait for; group 1 is the address. */
  servingLine?: RegExp;
  /** Bounds a broken start only; no test asserts it. */
  timeoutMs?: number;
  /** Runs node through this command, which must exec it (e.g. ['ip', 'netns', 'exec', 'ns1']): signals reach node. */
  prefix?: string[];
  /**
   * Runs the script itself, as an installed command runs: its `#!` line picks the interpreter and that
   * interpreter's flags (the script must be executable). `nodeFlags` then go in NODE_OPTIONS.
   */
  direct?: boolean;
}

const SERVING = /serving(?: on)? (\S+)/;

/** Runs `node [nodeFlags] script ...args` (or `script ...args`, `direct`) and resolves when it prints its serving line. */
export async function spawnServing(script: string, args: string[], options: SpawnServingOptions): Promise<ServingProgram> {
  const argv = options.direct ? [script, ...args] : [process.execPath, ...(options.nodeFlags ?? []), script, ...args];
  const [command, ...rest] = [...(options.prefix ?? []), ...argv];
  let env = options.env ?? process.env;
  if (options.direct && options.nodeFlags?.length) env = { ...env, NODE_OPTIONS: [env.NODE_OPTIONS, ...options.nodeFlags].filter(Boolean).join(' ') };
  const child = spawn(command, rest, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => ((text += d.toString()), (stdout += d.toString())));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pattern = options.servingLine ?? SERVING;
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not print its serving line in time:\n${text}`)), options.timeoutMs ?? 90_000);
    const check = () => {
      const match = pattern.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] ?? '');
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited with ${code} before serving:\n${text}`));
    });
  });
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    return exited;
  };
  return { address, child, output: () => text, exited, stop: () => signal('SIGTERM'), kill9: () => signal('SIGKILL') };
}
