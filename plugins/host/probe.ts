// Runs a module's entrypoint once in a throwaway worker thread (Piscina, one thread) and reports whether
// it loads and declares its models. Only an entrypoint that passed here is imported on the main thread.
import { createRequire } from 'node:module';
import { Piscina } from 'piscina';
import type { ModuleManifest } from './manifest.js';
import type { ProbeOutcome, ProbeTask } from './probe-worker.js';

export class ModuleLoadError extends Error {
  constructor(
    readonly moduleId: string,
    message: string,
  ) {
    super(message);
    this.name = 'ModuleLoadError';
  }
}

/** In dist/ the worker is JavaScript; under tsx (tests) it is TypeScript loaded through tsx's require hook. */
function workerLocation(): { filename: string; execArgv: string[] } {
  if (!import.meta.url.endsWith('.ts')) return { filename: new URL('./probe-worker.js', import.meta.url).href, execArgv: [] };
  const require = createRequire(import.meta.url);
  return { filename: new URL('./probe-worker.ts', import.meta.url).href, execArgv: ['--require', require.resolve('tsx/cjs')] };
}

/** Resolves when the entrypoint at `url` loads cleanly; throws a ModuleLoadError saying why not. */
export async function probeEntrypoint(url: string, manifest: ModuleManifest, timeoutMs: number): Promise<ProbeOutcome & { ok: true }> {
  const { filename, execArgv } = workerLocation();
  const pool = new Piscina({ filename, execArgv, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, atomics: 'disabled' });
  // An entrypoint that throws from a timer kills the worker; Piscina reports it here as well as on the task.
  pool.on('error', () => undefined);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const outcome = (await pool.run({ url, manifest } satisfies ProbeTask, { signal })) as ProbeOutcome;
    if (!outcome.ok) throw new ModuleLoadError(manifest.module_id, outcome.error.message);
    return outcome;
  } catch (err) {
    if (err instanceof ModuleLoadError) throw err;
    if (signal.aborted) throw new ModuleLoadError(manifest.module_id, `its entrypoint did not finish loading within ${timeoutMs} ms`);
    throw new ModuleLoadError(manifest.module_id, `its entrypoint ended the worker that loaded it: ${(err as Error).message}`);
  } finally {
    await pool.destroy().catch(() => undefined);
  }
}
