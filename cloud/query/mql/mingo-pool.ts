// The worker threads that evaluate residual stages. Aborting a task (on timeout) terminates its thread,
// which is the only way to stop a synchronous runaway aggregation; Piscina then starts a fresh one.
import { Piscina } from 'piscina';
import type { MingoTask } from './mingo-worker.js';

function workerLocation(): { filename: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    filename: new URL(fromSource ? './mingo-worker.ts' : './mingo-worker.js', import.meta.url).href,
    // Only the loader flags: V8 heap flags (--max-old-space-size) are refused in a worker's execArgv.
    execArgv: fromSource ? loaderFlags(process.execArgv) : [],
  };
}

function loaderFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if ((argv[i] === '--import' || argv[i] === '--loader') && i + 1 < argv.length) out.push(argv[i], argv[++i]);
    else if (/^--(import|loader)=/.test(argv[i])) out.push(argv[i]);
  }
  return out;
}

export class MingoPool {
  private readonly pool: Piscina;

  constructor(options: { threads?: number; maxHeapMb?: number } = {}) {
    const { filename, execArgv } = workerLocation();
    this.pool = new Piscina({
      filename,
      execArgv,
      minThreads: 0,
      maxThreads: options.threads ?? 2,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 2048 },
    });
  }

  run(task: MingoTask, signal: AbortSignal): Promise<Record<string, unknown>[]> {
    return this.pool.run(task, { signal });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
