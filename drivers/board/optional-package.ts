// Loads an optional native package on first use, so that machines without the hardware (and every test)
// never need it, and a missing package is a clear error naming it and what it needs.
import { failedPrecondition } from '../../plugins/errors.js';

export async function loadOptional<T>(pkg: string, needs: string): Promise<T> {
  try {
    const mod = (await import(pkg)) as { default?: T } & T;
    return (mod.default ?? mod) as T;
  } catch (err) {
    throw failedPrecondition(
      `the optional package ${pkg} could not be loaded (${(err as Error).message}); it needs ${needs}. Install it with: npm install ${pkg}`,
    );
  }
}
