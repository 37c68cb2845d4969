// Test fixture: a spawned platform-cloud with two organizations, locations, machines and keys of every
// scope and role, and client factories. Tenancy is created through the server's admin channel (the
// same path the admin CLI takes while the server runs), which is faster than spawning the CLI.
import { callAdminChannel } from '../admin/channel.js';
import { createCloudClient, type CloudClient } from '../client/cloud-client.js';
import { removeDataDir, spawnCloud, type SpawnedCloud } from './spawn-cloud.js';

export interface Key {
  id: string;
  key: string;
}

export interface Machine {
  machine_id: string;
  part_id: string;
  part_secret: string;
  location_id: string;
}

export interface CloudFixture {
  cloud: SpawnedCloud;
  orgA: string;
  orgB: string;
  locA1: string;
  locA2: string;
  /** In orgA, location locA1. */
  machineA1: Machine;
  /** In orgA, location locA2. */
  machineA2: Machine;
  machineB: Machine;
  keys: { ownerA: Key; operatorA: Key; ownerLocA1: Key; operatorLocA1: Key; ownerMachineA2: Key; ownerB: Key };
  client(key: Key): CloudClient;
  partClient(machine: Machine): CloudClient;
  close(): Promise<void>;
}

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  const res = await callAdminChannel(dataDir, action, args);
  if (!res) throw new Error('admin channel of the spawned cloud is not answering');
  return res.result as T;
}

/** `env`: settings for the cloud (added to this process' environment), such as PLATFORM_UPLOAD_*. */
export async function startFixture(env: NodeJS.ProcessEnv = {}): Promise<CloudFixture> {
  const cloud = await spawnCloud(undefined, [], env);
  const dir = cloud.dataDir;
  const orgA = (await admin<{ id: string }>(dir, 'org.create', { name: 'Org A' })).id;
  const orgB = (await admin<{ id: string }>(dir, 'org.create', { name: 'Org B' })).id;
  const locA1 = (await admin<{ id: string }>(dir, 'location.create', { org: orgA, name: 'Lab' })).id;
  const locA2 = (await admin<{ id: string }>(dir, 'location.create', { org: orgA, name: 'Field' })).id;
  const machineA1 = await admin<Machine>(dir, 'machine.create', { org: orgA, name: 'rover', location: locA1 });
  const machineA2 = await admin<Machine>(dir, 'machine.create', { org: orgA, name: 'arm', location: locA2 });
  const machineB = await admin<Machine>(dir, 'machine.create', { org: orgB, name: 'other' });
  const key = (args: Record<string, unknown>) => admin<Key>(dir, 'key.create', args);
  const keys = {
    ownerA: await key({ org: orgA, role: 'owner' }),
    operatorA: await key({ org: orgA, role: 'operator' }),
    ownerLocA1: await key({ org: orgA, location: locA1, role: 'owner' }),
    operatorLocA1: await key({ org: orgA, location: locA1, role: 'operator' }),
    ownerMachineA2: await key({ org: orgA, machine: machineA2.machine_id, role: 'owner' }),
    ownerB: await key({ org: orgB, role: 'owner' }),
  };
  // One client per credential: each authenticates once (scrypt on the server is deliberately slow).
  const clients = new Map<string, CloudClient>();
  const open = (type: 'api-key' | 'robot-secret', authEntity: string, payload: string) => {
    let c = clients.get(authEntity);
    if (!c) {
      c = createCloudClient({ serviceHost: cloud.address, credentials: { type, authEntity, payload } as never });
      clients.set(authEntity, c);
    }
    return c;
  };
  return {
    cloud,
    orgA,
    orgB,
    locA1,
    locA2,
    machineA1,
    machineA2,
    machineB,
    keys,
    client: (k) => open('api-key', k.id, k.key),
    partClient: (m) => open('robot-secret', m.part_id, m.part_secret),
    close: async () => {
      for (const c of clients.values()) c.close();
      await cloud.stop();
      removeDataDir(dir);
    },
  };
}

/** The gRPC status code of a rejected call (undefined when it is not a gRPC error). */
export function codeOf(err: unknown): number | undefined {
  return (err as { code?: number } | undefined)?.code;
}

/** The gRPC status code a promise rejects with (undefined when it resolves). */
export async function rejectionCodeOf(promise: Promise<unknown>): Promise<number | undefined> {
  return codeOf(
    await promise.then(
      () => undefined,
      (err: unknown) => err,
    ),
  );
}
