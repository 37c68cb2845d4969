// The driver side of the plugin contract: what a driver module sees inside its worker. It has no
// runtime imports on purpose: every resource's worker loads it, and a worker must start in a few
// milliseconds (the model side, with zod, stays on the main thread: see contract.ts).
import type { Api } from './api.js';

/** What every driver instance may offer besides the methods of its api. */
export interface Resource {
  /** A free-form, model-specific command. */
  doCommand?(command: Record<string, unknown>): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Releases hardware and timers. Called when the resource is removed, rebuilt or the runtime stops. */
  close?(): Promise<void> | void;
}

/** A proxy to a resource in another thread: every method returns a promise. */
export type Remote<T> = {
  [K in keyof T]-?: T[K] extends ((...args: infer A) => infer R) | undefined ? (...args: A) => Promise<Awaited<R>> : never;
};

export interface DriverLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The resources a driver depends on, each reached through a proxy to its worker. */
export interface Dependencies {
  /**
   * The proxy of a dependency of that API, typed by the API's token: `get(BOARD_API, attributes.board)`
   * is a `Remote<Board>`. Throws a DriverError if the name is not a dependency or has another API (the
   * kernel already refuses such a config when the model declared the dependency with its API).
   */
  get<T>(api: Api<T>, name: string): Remote<T>;
  /** The names of every dependency (depends_on plus implicit ones). */
  names(): string[];
}

export interface DriverContext<A> {
  readonly name: string;
  readonly api: string;
  readonly model: string;
  readonly attributes: A;
  readonly dependencies: Dependencies;
  readonly logger: DriverLogger;
}

export type DriverFactory<A = unknown, R extends Resource = Resource> = (context: DriverContext<A>) => R | Promise<R>;

/** Declares a driver factory; the identity function, there for types. */
export function defineDriver<A, R extends Resource>(factory: DriverFactory<A, R>): DriverFactory<A, R> {
  return factory;
}
