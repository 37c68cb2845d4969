// Messages between the kernel (main thread) and a driver host (the resource's Piscina worker), and
// between two driver hosts (a dependent calling its dependency over a MessagePort).
import type { MessagePort } from 'node:worker_threads';
import type { SerializedError } from '../../plugins/errors.js';
import type { LevelName } from '../config/log-levels.js';

export { LEVEL_VALUES } from '../config/log-levels.js';
export type LogLevelName = LevelName;

export interface ConstructTask {
  op: 'construct';
  driverUrl: string;
  name: string;
  api: string;
  model: string;
  attributes: unknown;
  /** One port per dependency, connected to that dependency's worker. */
  /** Each dependency's channel, with its API so that dependencies.get(api, name) can check it. */
  dependencies: { name: string; api: string; port: MessagePort }[];
  /** The kernel's own channel to the driver, served once it is built (saves a task round trip per start). */
  kernelPort: MessagePort;
  logger: string;
  logLevel: LogLevelName;
  /** Extra fields stamped on every log line, such as module_id for module drivers. */
  logFields?: Record<string, unknown>;
}

export interface CallTask {
  op: 'call';
  method: string;
  args: unknown[];
}

/** Attaches a port on which a dependent will call this driver. */
export interface ServeTask {
  op: 'serve';
  port: MessagePort;
}

export interface CloseTask {
  op: 'close';
}

export interface LogLevelTask {
  op: 'logLevel';
  level: LogLevelName;
}

export type DriverTask = ConstructTask | CallTask | ServeTask | CloseTask | LogLevelTask;

export type Outcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** A log record that a worker posts to the main thread, which deduplicates and writes it. */
export interface LogRecord {
  type: 'log';
  level: LogLevelName;
  logger: string;
  message: string;
  fields?: Record<string, unknown>;
  time: number;
}

/**
 * Posted on the log channel once a driver is constructed. The construct result travels on Piscina's own
 * port, which is not ordered with the log channel; waiting for this marker makes every line logged
 * during construction land before the resource is reported ready.
 */
export interface LogSyncRecord {
  type: 'log-sync';
}

export interface PortRequest {
  id: number;
  method: string;
  args: unknown[];
}

export interface PortResponse {
  id: number;
  outcome: Outcome;
}
