// Where a resource's driver runs, as the kernel sees it. platform-server hosts each driver in its own
// worker thread (core/workers/worker-hosting.ts: crash isolation, one thread per resource);
// platform-micro-server hosts them all in its main thread (core/micro/in-process-hosting.ts: one thread,
// little memory). The kernel knows only this interface, so both compose the same Machine.
import type { InjectionToken } from 'tsyringe';
import type { LevelName } from '../config/log-levels.js';

/** A log line a driver wrote, handed to the kernel to deduplicate and write. */
export interface DriverLogLine {
  level: LevelName;
  logger: string;
  message: string;
  fields?: Record<string, unknown>;
}

export interface DriverHandleEvents {
  /** The driver failed outside of a call (its worker died, or it threw from its own timer): reported once. */
  onCrash(error: Error): void;
  onLog(line: DriverLogLine): void;
}

/**
 * What a dependent receives for each dependency: opaque to the kernel, which only passes what one
 * handle's `openChannel()` returned into another's `construct()` (a MessagePort between workers, a
 * direct reference in one thread).
 */
export type DependencyLink = unknown;

export interface DriverConstruction {
  /** The driver module of the model (plugins/contract.ts ModelDefinition.driver). */
  driverUrl: string;
  name: string;
  api: string;
  model: string;
  attributes: unknown;
  dependencies: { name: string; api: string; link: DependencyLink }[];
  logger: string;
  logLevel: LevelName;
  /** Fields stamped on every log line, such as module_id for module drivers. */
  logFields?: Record<string, unknown>;
}

export interface DriverHandle {
  readonly alive: boolean;
  /** Why the driver ended, once it crashed. */
  readonly crashError?: Error;
  /** Calls made through this handle (the API layer's), for diagnostics. */
  readonly calls: number;
  /** Builds the driver; a construction that outlives `timeoutMs` fails with DEADLINE_EXCEEDED. */
  construct(construction: DriverConstruction, timeoutMs: number): Promise<void>;
  call(method: string, args: unknown[]): Promise<unknown>;
  /** A link on which a dependent calls (and samples) this driver. */
  openChannel(): Promise<DependencyLink>;
  setLogLevel(level: LevelName): Promise<void>;
  /** Closes the driver (bounded by `timeoutMs`). Never throws for a dead driver. */
  close(timeoutMs: number): Promise<void>;
}

export interface DriverHosting {
  /** A handle for one resource (`resource` is `<api>/<name>`, for errors); nothing runs until construct(). */
  create(resource: string, events: DriverHandleEvents): DriverHandle;
}

/** The DI token of the runtime's DriverHosting, chosen by the program that composes the kernel. */
export const DRIVER_HOSTING: InjectionToken<DriverHosting> = 'DriverHosting';
