// -cpuprofile: a V8 CPU profile of the main thread, written as a .cpuprofile file (the JSON that Chrome
// DevTools and VS Code load) when the runtime stops. Driver workers are separate isolates and are not in it.
import { accessSync, constants, statSync } from 'node:fs';
import { Session, type Profiler } from 'node:inspector';
import { dirname, resolve } from 'node:path';
import { writeFileDurable } from '../serving/durable-file.js';
import { CpuProfileError } from '../serving/errors.js';
export { CpuProfileError };

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result as T))));
}

/** Fails at start, not after hours of profiling, when the file could never be written. */
function checkWritable(path: string): void {
  let target;
  try {
    target = statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    throw new CpuProfileError(path, `cannot be checked: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (target?.isDirectory()) throw new CpuProfileError(path, 'is a directory; give a file path such as runtime.cpuprofile');
  const folder = dirname(path);
  const parent = statSync(folder, { throwIfNoEntry: false });
  if (!parent?.isDirectory()) throw new CpuProfileError(path, `folder ${folder} does not exist`);
  try {
    // The profile is written through a temp file in the same folder, so the folder must be writable.
    accessSync(folder, constants.W_OK);
  } catch {
    throw new CpuProfileError(path, `folder ${folder} is not writable`);
  }
}

export class CpuProfile {
  private stopping?: Promise<void>;

  private constructor(
    readonly path: string,
    private readonly session: Session,
  ) {}

  /** Starts profiling the calling thread. Throws CpuProfileError, naming the flag, for an unusable path. */
  static async start(path: string): Promise<CpuProfile> {
    const absolute = resolve(path);
    checkWritable(absolute);
    const session = new Session();
    session.connect();
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    return new CpuProfile(absolute, session);
  }

  /** Stops profiling and writes the file durably. Safe to call more than once; later calls wait for the first. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        const { profile } = await post<{ profile: Profiler.Profile }>(this.session, 'Profiler.stop');
        await writeFileDurable(this.path, JSON.stringify(profile));
      } finally {
        this.session.disconnect();
      }
    })();
    return this.stopping;
  }
}
