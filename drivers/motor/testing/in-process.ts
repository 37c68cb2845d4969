// Test helper: a Remote<T> over an object in this thread, behaving like a dependency proxy (every method
// returns a promise; a missing method rejects with code UNIMPLEMENTED), and a logger that keeps lines.
import type { DriverLogger, Remote } from '../../../plugins/contract.js';

export function inProcess<T extends object>(target: T): Remote<T> {
  return new Proxy({} as Remote<T>, {
    get(_, property) {
      if (typeof property !== 'string' || property === 'then') return undefined;
      return async (...args: unknown[]) => {
        const fn = (target as Record<string, unknown>)[property];
        if (typeof fn !== 'function') throw Object.assign(new Error(`the driver does not implement ${property}`), { code: 'UNIMPLEMENTED' });
        // Structured clone, as a MessagePort would, so tests catch values that can't cross threads.
        return structuredClone(await (fn as (...a: unknown[]) => unknown).apply(target, structuredClone(args)));
      };
    },
  });
}

export function memoryLogger(): DriverLogger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
