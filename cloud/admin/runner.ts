// Runs an admin action whether or not a server is up.
//
// Embedded default (target: the data dir): through the server's admin channel when it answers,
// otherwise against the database file opened directly. While a server is starting it holds the file
// but does not answer yet, so both are retried for a while.
//
// Scale-out mode (target: { backendStoreUri }): against PostgreSQL directly, always. PostgreSQL takes
// writers from any number of processes, so there is no channel to go through: the action's statements
// commit as the servers' own do, and what the servers must hear of at once (a key revoked, a config
// saved) reaches them by notification (cloud/store/pg-notify.ts), as from any of them.
import { setTimeout as sleep } from 'node:timers/promises';
import type { BlobStore } from '../store/blob-store.js';
import { PgStore } from '../store/pg-store.js';
import { Store, StoreLockedError } from '../store/store.js';
import type { AdminAction } from './actions.js';
import { AdminError, callAdminChannel } from './channel.js';

/** Where an admin action runs: a data dir (the embedded default), or the scale-out mode's PostgreSQL. */
export type AdminTarget =
  | string
  | {
      /** postgres://... (the --backend-store-uri of the servers). */
      backendStoreUri: string;
      /** The blob store of the same cloud (S3), for actions that read or write content. */
      blobs?: BlobStore;
    };

export async function runAdminAction(
  target: AdminTarget,
  name: string,
  args: Record<string, unknown>,
  actions: Record<string, AdminAction>,
  waitMs = 15_000,
): Promise<unknown> {
  const action = actions[name];
  if (!action) throw new AdminError(`unknown admin action "${name}"`);
  if (typeof target !== 'string') return runOnPostgres(target, action, args);
  const dataDir = target;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const viaServer = await callAdminChannel(dataDir, name, args);
    if (viaServer) return viaServer.result;
    let store: Store;
    try {
      store = await Store.open(dataDir, { lockWaitMs: 0, readers: 1 });
    } catch (err) {
      if (err instanceof StoreLockedError && Date.now() < deadline) {
        await sleep(200);
        continue;
      }
      throw err;
    }
    try {
      return await action(store, args);
    } finally {
      await store.close();
    }
  }
}

async function runOnPostgres(target: Exclude<AdminTarget, string>, action: AdminAction, args: Record<string, unknown>): Promise<unknown> {
  const store = await PgStore.open(target.backendStoreUri, { poolSize: 2, blobs: target.blobs });
  try {
    return await action(store, args);
  } finally {
    await store.close();
  }
}
