// A typed proxy to a driver in another thread. Every property is a method that sends the call through
// `send` and resolves with the driver's result or rejects with its DriverError.
import type { Remote } from '../../plugins/contract.js';
import { SAMPLE, type SamplerFunction } from './port-sampler.js';

export type Send = (method: string, args: unknown[]) => Promise<unknown>;

/** `sample`, when given, is reachable as `proxy[SAMPLE]` (port-sampler.ts): not a driver method. */
export function createRemote<T>(send: Send, sample?: SamplerFunction): Remote<T> {
  const methods = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy({} as Remote<T>, {
    get(_target, property) {
      if (property === SAMPLE) return sample;
      // A proxy must not look like a thenable, or `await proxy` would call `then` on the driver.
      if (typeof property !== 'string' || property === 'then') return undefined;
      let method = methods.get(property);
      if (!method) {
        method = (...args: unknown[]) => send(property, args);
        methods.set(property, method);
      }
      return method;
    },
  });
}
