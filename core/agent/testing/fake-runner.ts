// A CommandRunner for tests: records every command, answers from a table, and streams given lines (or
// the output of a real command, such as journalctl reading a journal file) for `stream`.
import type { CommandResult, CommandRunner, CommandStream } from '../system/command-runner.js';
import { ProcessRunner } from '../system/command-runner.js';

export class FakeRunner implements CommandRunner {
  readonly calls: string[] = [];
  readonly streams: string[] = [];
  /** Answers by the command line ("apt-cache policy"); unlisted commands succeed with no output. */
  answers = new Map<string, Partial<CommandResult>>();
  /** Lines a stream yields, or a real command to run in place of the streamed one. */
  streamSource: string[] | [string, string[]] = [];

  async run(command: string, args: string[]): Promise<CommandResult> {
    const line = [command, ...args].join(' ');
    this.calls.push(line);
    return { code: 0, stdout: '', stderr: '', ...this.answers.get(line) };
  }

  stream(command: string, args: string[], onLine: (line: string) => void): CommandStream {
    this.streams.push([command, ...args].join(' '));
    const src = this.streamSource;
    if (src.length === 2 && Array.isArray(src[1])) return new ProcessRunner().stream(src[0] as string, src[1], onLine);
    for (const l of src as string[]) onLine(l);
    const exited = Promise.resolve(0);
    return { exited, stop: async () => void (await exited) };
  }
}
