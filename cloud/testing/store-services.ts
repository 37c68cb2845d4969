// Test helper: the upload and dataset services (DataSyncService, DatasetService, with AuthService for
// the clients' log in) served in this process on a free port over a given StoreWithBlobs, so that a
// test can run the real clients against either TabularStore backend (tabular-backends.ts). Several
// may serve one PostgreSQL database at once, standing for several cloud processes.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { addAuthService } from '../auth/auth-service.js';
import { Authorizer } from '../auth/authorizer.js';
import { TokenSigner } from '../auth/token.js';
import { createCloudClient, type CloudClient } from '../client/cloud-client.js';
import { PartDirectory } from '../data/parts.js';
import { addDatasetService } from '../dataset/dataset-service.js';
import { addDataSyncService } from '../datasync/data-sync-service.js';
import type { UploadStreamLimits } from '../datasync/upload-streams.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { tempDataDir, removeDataDir } from './spawn-cloud.js';
import type { Key, Machine } from './tenancy-fixture.js';

export interface ServedStore {
  address: string;
  /** Clients made with client() / partClient(), closed by stop(). */
  client(key: Key): CloudClient;
  partClient(machine: Machine): CloudClient;
  stop(): Promise<void>;
}

export interface Tenancy {
  org: string;
  machine: Machine;
  owner: Key;
}

/** An organization with one machine and an owner key, written to the store. */
export async function makeTenancy(store: StoreWithBlobs): Promise<Tenancy> {
  const org = (await createOrganization(store, { name: 'uploads' })).id;
  const machine = await createMachine(store, { org, name: 'rover' });
  const owner = await createKey(store, { org, role: 'owner' });
  return { org, machine, owner };
}

export async function serveStore(store: StoreWithBlobs, streamLimits?: UploadStreamLimits): Promise<ServedStore> {
  const tokens = new TokenSigner(randomBytes(32));
  const authorizer = new Authorizer(store, tokens);
  const server = new Server();
  const importsDir = tempDataDir();
  addAuthService(server, store, tokens);
  addDataSyncService(server, { store, authorizer, parts: new PartDirectory(store), streamLimits });
  addDatasetService(server, store, authorizer, { importsDir });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const address = `127.0.0.1:${port}`;
  const clients: CloudClient[] = [];
  const open = (type: 'api-key' | 'robot-secret', authEntity: string, payload: string) => {
    const c = createCloudClient({ serviceHost: address, credentials: { type, authEntity, payload } as never });
    clients.push(c);
    return c;
  };
  return {
    address,
    client: (k) => open('api-key', k.id, k.key),
    partClient: (m) => open('robot-secret', m.part_id, m.part_secret),
    stop: async () => {
      for (const c of clients) c.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      removeDataDir(importsDir);
    },
  };
}
