// Admin actions by name. The admin CLI runs them through the running server's admin channel, or, when
// no server runs, against the store opened directly: the same function either way.
import type { Store } from '../store/store.js';
import { listKeys, revokeKey, rotateKey } from './api-keys.js';
import { createKey, createLocation, createMachine, createOrganization, listOrganizations } from './tenancy.js';

export type AdminAction = (store: Store, args: Record<string, unknown>) => Promise<unknown>;

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
