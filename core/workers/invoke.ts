// Calls a method of a driver instance and turns the result or the thrown error into an Outcome that
// can cross a thread boundary. Driver errors are values here, not task failures: a rejected task means
// the worker itself died.
import { serializeError } from '../../plugins/errors.js';
import { unwrapTransfer } from '../../plugins/transfer.js';
import type { Outcome } from './protocol.js';

export interface Invocation {
  outcome: Outcome;
  transfer: ArrayBuffer[];
}

/** `resource` names the resource in any error the call produces (DriverError.resource). */
export async function invoke(target: object | undefined, method: string, args: unknown[], resource?: string): Promise<Invocation> {
  try {
    if (!target) throw Object.assign(new Error('the driver is not constructed'), { code: 'UNAVAILABLE' });
    const fn = (target as Record<string, unknown>)[method];
    if (typeof fn !== 'function') {
      throw Object.assign(new Error(`the driver does not implement ${method}`), { code: 'UNIMPLEMENTED' });
    }
    const { value, buffers } = unwrapTransfer(await fn.apply(target, args));
    return { outcome: { ok: true, value: value ?? null }, transfer: buffers };
  } catch (err) {
    return { outcome: { ok: false, error: serializeError(err, resource) }, transfer: [] };
  }
}
