// Large buffers (point clouds, images) are moved between threads, not copied. A driver method returns
// `transfer(value, [buffer, ...])` and the worker host posts the value with those buffers in the
// transfer list; the caller receives the plain value. A driver may also wrap an argument of a call to a
// dependency (core/workers/port-rpc.ts), which then moves to the dependency's worker.
const TRANSFER = Symbol.for('platform.transfer');

export interface Transfer<T> {
  readonly [TRANSFER]: true;
  readonly value: T;
  readonly buffers: ArrayBuffer[];
}

export function transfer<T>(value: T, buffers: ArrayBuffer[]): T {
  // Typed as T so that driver methods keep their declared return types.
  return { [TRANSFER]: true, value, buffers } as unknown as T;
}

export function isTransfer(value: unknown): value is Transfer<unknown> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TRANSFER] === true;
}

/** Splits a possibly-wrapped value into the value and its transfer list. */
export function unwrapTransfer(value: unknown): { value: unknown; buffers: ArrayBuffer[] } {
  return isTransfer(value) ? { value: value.value, buffers: value.buffers } : { value, buffers: [] };
}
