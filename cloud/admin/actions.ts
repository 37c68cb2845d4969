// Admin actions by name. In the embedded default the admin CLI runs them through the running server's
// admin channel, or, when no server runs, against the store opened directly; in the scale-out mode it
// runs them against PostgreSQL directly, whether or not servers run (runner.ts). The same function
// every way: an action takes the cloud's tables (TabularStore, with the blobs).
import type { StoreWithBlobs } from '../store/tabular.js';
import { listKeys, revokeKey, rotateKey } from './api-keys.js';
import { createKey, createLocation, createMachine, createOrganization, listOrganizations } from './tenancy.js';

export type AdminAction = (store: StoreWithBlobs, args: Record<string, unknown>) => Promise<unknown>;

export const coreAdminActions: Record<string, AdminAction> = {
  'org.create': (store, args) => createOrganization(store, args),
  'org.list': (store) => listOrganizations(store),
  'location.create': (store, args) => createLocation(store, args),
  'machine.create': (store, args) => createMachine(store, args),
  'key.create': (store, args) => createKey(store, args),
  'key.list': (store, args) => listKeys(store, args),
  'key.revoke': (store, args) => revokeKey(store, args),
  'key.rotate': (store, args) => rotateKey(store, args),
};
