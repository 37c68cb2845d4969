// How other parts of the cloud plug into platform-cloud. An extension registers gRPC services in
// start(ctx), may add admin subcommands in commands(program, admin) and admin actions that those
// subcommands run (adminActions, see cloud/admin/actions.ts), and is stopped in reverse order.
//
// To add one: write `export const myExtension: CloudExtension = {...}` in your folder, import it below
// and append it to `extensions` (one line each; keep the list sorted by folder).
import type { Server } from '@grpc/grpc-js';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { AdminAction } from '../admin/actions.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { QueryEngine } from '../data/query-engine.js';
import type { Store } from '../store/store.js';
import { agentExtension } from '../agent/extension.js';
import { mlTrainingExtension } from '../mltraining/extension.js';
import { partsExtension } from '../parts/extension.js';
import { queryExtension } from '../query/extension.js';

export interface CloudContext {
  /** The gRPC server, not yet bound: add services with server.addService(...). Reflection covers them. */
  server: Server;
  /** DuckDB access (store.query / store.execute / store.transaction; one writer, pooled readers) and store.blobs. */
  store: Store;
  /** Verifies `authorization: Bearer` tokens and checks org/location/machine scope and owner/operator role. */
  authorizer: Authorizer;
  /** The --data-dir of this cloud; put extension files in a subfolder named after the extension. */
  dataDir: string;
  logger: Logger;
  /** Registers the engine behind TabularDataBySQL/ByMQL, GetDatabaseConnection, ConfigureDatabaseUser. */
  setQueryEngine(engine: QueryEngine): void;
}

/**
 * Runs a named admin action (core or any extension's) via the running server's admin channel, or
 * against the store opened directly when no server runs. Give your subcommands a `--data-dir` option
 * (default: defaultDataDir) and pass it through.
 */
export interface AdminRunner {
  run(action: string, args: Record<string, unknown>, dataDir?: string): Promise<unknown>;
  /** PLATFORM_CLOUD_DATA_DIR or ~/.platform/cloud. */
  defaultDataDir: string;
}

export interface CloudExtension {
  name: string;
  /** Called before the server binds; create tables (CREATE TABLE IF NOT EXISTS) and add services here. */
  start(ctx: CloudContext): Promise<void> | void;
  stop?(): Promise<void> | void;
  /** Adds admin subcommands to the platform-cloud program (commander). */
  commands?(program: Command, admin: AdminRunner): void;
  /** Admin actions by name (e.g. 'agent.channel.set'), run with admin.run(name, args). */
  adminActions?: Record<string, AdminAction>;
}

export const extensions: CloudExtension[] = [
  agentExtension,
  mlTrainingExtension,
  partsExtension,
  queryExtension,
];
