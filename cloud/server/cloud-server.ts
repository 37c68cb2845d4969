// Assembles platform-cloud: store, token signer, authorizer, the core services (auth, data sync, data,
// datasets), the extensions, reflection and health, then binds and opens the admin channel.
//
// Two modes (issue 33). The embedded default: one DuckDB file and blob files in --data-dir, one process.
// The scale-out mode (backendStoreUri with blobs): every table in PostgreSQL (PgStore) and every blob in
// the given BlobStore (S3), shared by equal processes; no DuckDB Store is opened at all, and the data dir
// keeps only what is this node's own (the admin socket, the SQL segment cache, temp files).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import type { Server as HttpServer } from 'node:http';
import { pino, type Logger } from 'pino';
import { addStandardServices } from '../../core/serving/standard-services.js';
import { withBoundedStatus } from '../../core/serving/bounded-status.js';
import { withCallMetrics } from '../../core/serving/telemetry/grpc-metrics.js';
import { withCallTracing } from '../../core/serving/telemetry/grpc-tracing.js';
import { coreAdminActions } from '../admin/actions.js';
import { startAdminChannel } from '../admin/channel.js';
import { addAuthService } from '../auth/auth-service.js';
import { Authorizer } from '../auth/authorizer.js';
import { cloudAuthFor } from '../auth/cloud-auth.js';
import { addDataServices } from './data-services.js';
import { QueryEngineSlot } from '../kit/query-engine-slot.js';
import { blobOrphanAgeMs, removeOrphanBlobs, startOrphanSweep, type RunningOrphanSweep } from '../store/blob-orphans.js';
import type { BlobStore } from '../store/blob-store.js';
import { PgStore } from '../store/pg-store.js';
import { Store } from '../store/store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { blobSweepIntervalMs, redactUri } from './backend-options.js';
import { startCloudWeb } from '../web/cloud-web.js';
import { ThumbnailRoute } from '../web/thumbnails.js';
import type { WebServer } from '../../core/serving/web/web-server.js';
import { registerExtensions, type CloudContext, type CloudExtension, type ServingTls } from '../kit/extension-contract.js';
import { decodeErrorsAsInvalidArgument } from '../kit/handlers.js';
import { installMessageFill } from '../kit/grpc-message-fill.js';

export interface CloudServerOptions {
  dataDir: string;
  /** 0 asks the OS for a free port. */
  port: number;
  host?: string;
  tokenTtlSeconds?: number;
  extensions?: CloudExtension[];
  logger?: Logger;
  /** PEM certificate chain and private key: gRPC is served over TLS, and extensions get the pair (ctx.tls). */
  tls?: ServingTls;
  /** Where binary content goes; default: files under <dataDir>/blobs. Owned by the caller (stop leaves it open). */
  blobs?: BlobStore;
  /**
   * The scale-out mode: every table in this PostgreSQL database (postgres://...), every blob in `blobs`
   * (required with it; S3 in a deployment). Checked by resolveBackend (backend-options.ts) on the command line.
   */
  backendStoreUri?: string;
  /** The data browser's web port (cloud/web/): its port (0: a free one) and, for tests, another page folder. Omitted: no web port. */
  web?: { port: number; assetsDir?: string; allowedHosts?: readonly string[] };
}

export interface RunningCloud {
  /** host:port the server listens on. */
  address: string;
  port: number;
  /** http://host:port/ of the data browser, when options.web asked for it. */
  webUrl?: string;
  /** The cloud's tables and blobs: the DuckDB Store, or the PgStore of the scale-out mode. */
  tables: StoreWithBlobs;
  /** The DuckDB Store of the embedded default; absent in the scale-out mode. */
  store?: Store;
  stop(): Promise<void>;
}

/** A cloud in the embedded default: its DuckDB Store is there. */
export type EmbeddedCloud = RunningCloud & { store: Store };

/** Opens the tables and blobs of the mode the options name. */
async function openTables(options: CloudServerOptions): Promise<{ tables: StoreWithBlobs; store?: Store; close(): Promise<void> }> {
  if (options.backendStoreUri === undefined) {
    const store = await Store.open(options.dataDir, { blobs: options.blobs });
    return { tables: store, store, close: () => store.close() };
  }
  if (!options.blobs) throw new Error('the scale-out mode (backendStoreUri) needs its blob store (blobs): tables in PostgreSQL, blobs in S3');
  try {
    const tables = await PgStore.open(options.backendStoreUri, { blobs: options.blobs });
    return { tables, close: () => tables.close() };
  } catch (err) {
    throw new Error(`--backend-store-uri ${redactUri(options.backendStoreUri)}: cannot open the database (${(err as Error).message})`, { cause: err });
  }
}

export async function startCloud(options: CloudServerOptions & { backendStoreUri?: undefined }): Promise<EmbeddedCloud>;
export async function startCloud(options: CloudServerOptions): Promise<RunningCloud>;
export async function startCloud(options: CloudServerOptions): Promise<RunningCloud> {
  const logger = options.logger ?? pino({ name: 'platform-cloud' }, pino.destination(2));
  const host = options.host ?? '127.0.0.1';
  const orphanAgeMs = blobOrphanAgeMs();
  const { tables, store, close } = await openTables(options);
  let sweep: RunningOrphanSweep | undefined;
  if (tables instanceof PgStore) {
    // The scale-out mode: processes share the bucket, and one of them, elected through PostgreSQL,
    // sweeps every PLATFORM_BLOB_SWEEP_INTERVAL_S (blob-orphans.ts), taking over when its leader dies.
    sweep = startOrphanSweep(tables, {
      minAgeMs: orphanAgeMs,
      intervalMs: blobSweepIntervalMs(),
      election: { url: tables.url },
      onSwept: (removed) => logger.info({ removed, minAgeS: orphanAgeMs / 1000 }, 'removed blobs that no committed row names'),
      onError: (err) => logger.error({ err }, 'the sweep of orphaned blobs failed; it runs again at the next interval'),
    });
  } else {
    // Before any call is accepted: content left without its row by a crash (see blob-orphans.ts). A sweep
    // that fails (an unreadable folder, say) is housekeeping left undone, not a reason to refuse service.
    try {
      const removed = await removeOrphanBlobs(tables, orphanAgeMs);
      logger.info({ removed, minAgeS: orphanAgeMs / 1000 }, 'removed blob files that no committed row names');
    } catch (err) {
      logger.error({ err }, 'the sweep of orphaned blob files failed; it runs again at the next start');
    }
  }
  // Temp zips of imports that a crash cut short (cloud/dataset/import-handler.ts).
  await rm(join(options.dataDir, 'imports'), { recursive: true, force: true }).catch((err) => logger.error({ err }, 'could not clear the imports folder'));
  // Large requests are put together as their chunks arrive, not in one copy at the end (grpc-message-fill.ts).
  installMessageFill();
  // The token secret and the login gate: in the data dir and this process, or in PostgreSQL for every
  // process of the scale-out mode (cloud-auth.ts).
  // A start that fails here (the database refusing the secret's table, say) closes what it opened.
  const { tokens, loginGate } = await cloudAuthFor(tables, options.dataDir, options.tokenTtlSeconds).catch(async (err: unknown) => {
    await sweep?.stop();
    await close();
    throw err;
  });
  const authorizer = new Authorizer(tables, tokens);
  const server = decodeErrorsAsInvalidArgument(
    // Every status it sends is bounded (bounded-status.ts): no echoed input can wedge a client's connection.
    new Server(
      withCallMetrics(
        withCallTracing(withBoundedStatus({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.max_send_message_length': 64 * 1024 * 1024 })),
      ),
    ),
  );
  // Every service added, extensions' included: the web port forwards gRPC-Web calls to exactly these.
  const services: ServiceDefinition[] = [];
  const addService = server.addService.bind(server);
  server.addService = (definition, implementation) => {
    services.push(definition);
    addService(definition, implementation);
  };
  const queryEngine = new QueryEngineSlot();
  // One login gate for every way in (Authenticate, the PostgreSQL endpoint's password login): failures
  // on one count toward the back-off of the other, per key id and per source address.
  addAuthService(server, tables, tokens, loginGate);
  addDataServices(server, { tables, authorizer, queryEngine, logger, importsDir: join(options.dataDir, 'imports') });

  const started: CloudExtension[] = [];
  // Throws before anything starts when two extensions share a name or an admin action.
  const actions = registerExtensions(options.extensions ?? [], coreAdminActions);
  const ctx: CloudContext = {
    server,
    store,
    tables,
    authorizer,
    dataDir: options.dataDir,
    logger,
    tls: options.tls,
    loginGate,
    setQueryEngine: (engine) => {
      queryEngine.engine = engine;
    },
  };
  let adminChannel: HttpServer | undefined;
  let web: WebServer | undefined;
  const stopAll = async () => {
    await web?.stop();
    for (const ext of [...started].reverse()) {
      try {
        await ext.stop?.();
      } catch (err) {
        logger.error({ err, extension: ext.name }, 'extension failed to stop');
      }
    }
    // Calls in flight get a few seconds to finish; a stalled client stream must not block shutdown.
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 5000);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    if (adminChannel) await new Promise<void>((resolve) => adminChannel!.close(() => resolve()));
    await sweep?.stop();
    await close();
  };
  try {
    for (const ext of options.extensions ?? []) {
      await ext.start(ctx);
      started.push(ext);
      logger.info({ extension: ext.name }, 'extension started');
    }
    const health = addStandardServices(server);
    // No client certificates are asked for: callers prove who they are with API keys and tokens.
    const credentials = options.tls
      ? ServerCredentials.createSsl(null, [{ cert_chain: options.tls.cert, private_key: options.tls.key }], false)
      : ServerCredentials.createInsecure();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${options.port}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    health.setStatus('', 'SERVING');
    adminChannel = await startAdminChannel(options.dataDir, tables, actions);
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    if (options.web) {
      web = await startCloudWeb({
        bindAddress: `${host.includes(':') ? `[${host}]` : host}:${options.web.port}`,
        grpcAddress: address,
        tls: options.tls,
        services,
        thumbnails: new ThumbnailRoute(tables, authorizer),
        assetsDir: options.web.assetsDir,
        allowedHosts: options.web.allowedHosts,
        onError: (message, err) => logger.error({ err }, message),
      });
    }
    return { address, port, webUrl: web?.url, tables, store, stop: stopAll };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}
