// A typed proxy to a driver in another thread. Every property is a method that sends the call through
// `send` and resolves with the driver's result or rejects with its DriverError.
import type { Remote } from '../../plugins/contract.js';

export type Send = (method: string, args: unknown[]) => Promise<unknown>;

export function createRemote<T>(send: Send): Remote<T> {
  const methods = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy({} as Remote<T>, {
    get(_target, property) {
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
