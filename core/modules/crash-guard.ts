// A module's entrypoint runs on the main thread (its models' validators are needed there), so a timer or
// promise it leaves behind could throw later and end the runtime. This guard attributes an uncaught error
// to a module by the files in its stack: such an error becomes that module's crash (it is unloaded and
// reloaded with backoff); any other error ends the process as Node would, with its stack and exit code 1.
import { pathToFileURL } from 'node:url';

export type CrashOwner = (error: Error) => string | undefined;

export class CrashGuard {
  private installed = false;
  private readonly onError = (error: unknown) => this.handle(error);

  constructor(
    private readonly owner: CrashOwner,
    private readonly onModuleCrash: (moduleId: string, error: Error) => void,
  ) {}

  install(): void {
    if (this.installed) return;
    this.installed = true;
    process.on('uncaughtException', this.onError);
  }

  uninstall(): void {
    if (!this.installed) return;
    this.installed = false;
    process.off('uncaughtException', this.onError);
  }

  private handle(error: unknown): void {
    const moduleId = error instanceof Error ? this.owner(error) : undefined;
    if (moduleId) {
      this.onModuleCrash(moduleId, error as Error);
      return;
    }
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  }
}

/** Whether `stack` runs through a file under `dir` (plain path or file URL). */
export function stackTouches(stack: string | undefined, dir: string): boolean {
  if (!stack) return false;
  const base = dir.endsWith('/') ? dir : `${dir}/`;
  return stack.includes(base) || stack.includes(pathToFileURL(base).href);
}
