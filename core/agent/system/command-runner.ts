// Every operating-system command the agent runs (systemctl, apt-cache, journalctl, reboot) goes through
// a CommandRunner, so that tests can record the commands and feed their output instead of touching the
// machine they run on.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A long-running command whose stdout is read line by line (journalctl -f). */
export interface CommandStream {
  /** Stops the command; resolves once it has exited. */
  stop(): Promise<void>;
  /** Resolves with the exit code when the command ends on its own or is stopped. */
  readonly exited: Promise<number>;
}

export interface CommandRunner {
  run(command: string, args: string[]): Promise<CommandResult>;
  stream(command: string, args: string[], onLine: (line: string) => void): CommandStream;
}

/** Runs the commands for real. A command that cannot start resolves with code 127 and the error text. */
export class ProcessRunner implements CommandRunner {
  run(command: string, args: string[]): Promise<CommandResult> {
    return new Promise((resolve) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  stream(command: string, args: string[], onLine: (line: string) => void): CommandStream {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    createInterface({ input: child.stdout }).on('line', onLine);
    const exited = new Promise<number>((resolve) => {
      child.on('error', () => resolve(127));
      child.on('close', (code) => resolve(code ?? 1));
    });
    return {
      exited,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }
}

/**
 * For --dev-mode and PLATFORM_AGENT_INSTALL_ROOT, where the system files go under a prefix: commands
 * that change the machine (systemctl, apt-get, reboot) are logged and not run; reading the journal is.
 */
export class DryRunner implements CommandRunner {
  private readonly real = new ProcessRunner();

  constructor(private readonly log: (command: string) => void) {}

  run(command: string, args: string[]): Promise<CommandResult> {
    this.log([command, ...args].join(' '));
    return Promise.resolve({ code: 0, stdout: '', stderr: '' });
  }

  stream(command: string, args: string[], onLine: (line: string) => void): CommandStream {
    return this.real.stream(command, args, onLine);
  }
}

/** Runs a command and throws, naming it, when it fails. */
export async function runChecked(runner: CommandRunner, command: string, args: string[]): Promise<string> {
  const res = await runner.run(command, args);
  if (res.code !== 0) throw new Error(`${[command, ...args].join(' ')} exited with ${res.code}: ${res.stderr.trim() || res.stdout.trim()}`);
  return res.stdout;
}
