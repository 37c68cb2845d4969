// Runs an admin action whether or not the server is up: through its admin channel when it answers,
// otherwise against the database file opened directly. While a server is starting it holds the file
// but does not answer yet, so both are retried for a while.
import { setTimeout as sleep } from 'node:timers/promises';
import { Store, StoreLockedError } from '../store/store.js';
import type { AdminAction } from './actions.js';
import { AdminError, callAdminChannel } from './channel.js';

export async function runAdminAction(
  dataDir: string,
  name: string,
  args: Record<string, unknown>,
  actions: Record<string, AdminAction>,
  waitMs = 15_000,
): Promise<unknown> {
  const action = actions[name];
  if (!action) throw new AdminError(`unknown admin action "${name}"`);
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
