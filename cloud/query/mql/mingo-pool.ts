// The worker threads that evaluate residual stages. Aborting a task (on timeout) terminates its thread,
// which is the only way to stop a synchronous runaway aggregation; Piscina then starts a fresh one.
import { Piscina } from 'piscina';
import type { MingoTask } from './mingo-worker.js';

function workerLocation(): { filename: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    filename: new URL(fromSource ? './mingo-worker.ts' : './mingo-worker.js', import.meta.url).href,
    execArgv: fromSource ? process.execArgv : [],
  };
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
