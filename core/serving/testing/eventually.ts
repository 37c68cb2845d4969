// The one polling helper of the tests: wait until a condition holds. The deadline only bounds a broken
// test; no test asserts a timing. It lives in core/serving/ because the cloud's tests use it too.
import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** What is awaited, for the error. */
  what?: string;
  timeoutMs?: number;
}

/** Polls `probe` until `predicate` holds for its value (a probe that throws counts as not yet). */
export async function eventually<T>(probe: () => Promise<T> | T, predicate: (value: T) => boolean, options: EventuallyOptions | number = {}): Promise<T> {
  const { what, timeoutMs = 60_000 } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await probe();
      if (predicate(last)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) break;
    await sleep(50);
  }
  const subject = what ? `timed out waiting for ${what}` : `condition not met in ${timeoutMs} ms`;
  throw new Error(`${subject}; last value ${JSON.stringify(last)}${lastError ? `, last error ${String(lastError)}` : ''}`);
}

/** `eventually` for a check that returns the awaited value once it is there (truthy) and a falsy value before. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return (await eventually(check, Boolean, { what, timeoutMs })) as T;
}
