// The contract between platform-cloud and its extensions: what an extension gets (CloudContext,
// AdminRunner), what it provides (CloudExtension), and the one registration check (registerExtensions).
// Extensions import only this file, never cloud/server/extensions.ts (the list of them), so no extension
// and the server form an import cycle.
//
// An extension registers gRPC services in start(ctx), may add admin subcommands in commands(program,
// admin) and admin actions that those subcommands run (adminActions, see cloud/admin/actions.ts), and is
// stopped in reverse order. An extension keeps no module-level state: whatever it opens in start() lives
// in a closure or object created there (see createAgentExtension), so two clouds in one process, as tests
// start them, never share a database handle or a timer.
import type { Server } from '@grpc/grpc-js';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { AdminAction } from '../admin/actions.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { LoginGate } from '../auth/login-backoff.js';
import type { QueryEngine } from './query-engine-slot.js';
import type { Store } from '../store/store.js';
import type { StoreWithBlobs } from '../store/tabular.js';

export interface CloudContext {
  /** The gRPC server, not yet bound: add services with server.addService(...). Reflection covers them. */
  server: Server;
  /**
   * The cloud's tables and blobs (cloud/store/tabular.ts): the DuckDB Store in the embedded default, a
   * PgStore with its S3 blob store in the scale-out mode (issue 33). Write extensions against it.
   */
  tables: StoreWithBlobs;
  /**
   * The DuckDB Store itself, in the embedded default only (the same object as `tables`); absent in the
   * scale-out mode. For what only DuckDB does (the SQL engine's connections to the embedded file).
   */
  store?: Store;
  /** Verifies `authorization: Bearer` tokens and checks org/location/machine scope and owner/operator role. */
  authorizer: Authorizer;
  /** The --data-dir of this cloud; put extension files in a subfolder named after the extension. */
  dataDir: string;
  logger: Logger;
  /**
   * The certificate chain and key of `serve --tls-cert/--tls-key` (PEM), when the cloud serves TLS; an
   * extension with its own listener (the PostgreSQL endpoint) serves TLS with the same pair.
   */
  tls?: ServingTls;
  /**
   * The login back-off that AuthService/Authenticate uses (cloud/auth/login-backoff.ts). An extension
   * that checks passwords or keys itself (the PostgreSQL endpoint) passes its logins through this same
   * gate, so failures anywhere count toward one back-off per key id and per source address.
   */
  loginGate: LoginGate;
  /** Registers the engine behind TabularDataBySQL/ByMQL, GetDatabaseConnection, ConfigureDatabaseUser. */
  setQueryEngine(engine: QueryEngine): void;
}

/** A PEM certificate chain and its private key. */
export interface ServingTls {
  cert: Buffer;
  key: Buffer;
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

/**
 * Checks a list of extensions before any starts and returns every admin action by name, the core's
 * first. A misuse throws here, at registration, rather than later: two extensions with one name, or an
 * admin action that an extension or the core already defines.
 */
export function registerExtensions(extensions: readonly CloudExtension[], coreActions: Record<string, AdminAction>): Record<string, AdminAction> {
  const names = new Set<string>();
  const actions: Record<string, AdminAction> = { ...coreActions };
  const owner = new Map<string, string>(Object.keys(coreActions).map((action) => [action, 'the core admin actions']));
  for (const ext of extensions) {
    if (!ext.name) throw new Error('cloud extension: name is required');
    if (names.has(ext.name)) throw new Error(`cloud extension ${ext.name}: the name is already registered; extension names must be unique`);
    names.add(ext.name);
    for (const [action, run] of Object.entries(ext.adminActions ?? {})) {
      const previous = owner.get(action);
      if (previous) throw new Error(`cloud extension ${ext.name}: admin action ${action} is already defined by ${previous}; admin action names must be unique`);
      owner.set(action, `extension ${ext.name}`);
      actions[action] = run;
    }
  }
  return actions;
}
