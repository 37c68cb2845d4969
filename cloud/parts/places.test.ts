// AppService's browsing calls (ListOrganizations, ListLocations, ListMachines) against a spawned
// platform-cloud: each key sees its own organization and only the locations and machines in its scope.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import type { Machine } from '../../gen/platform/app/v1/robot_part.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { call, partClients, type PartClients } from './testing/part-clients.js';

type Created = { machine_id: string; part_id: string; part_secret: string; location_id: string };
let cloud: SpawnedCloud;
let org: { id: string };
let lab: { id: string };
let yard: { id: string };
let rover: Created;
let arm: Created;
const clients: PartClients[] = [];

async function as(key: { id: string; key: string }): Promise<PartClients> {
  const c = await partClients(cloud.address, key);
  clients.push(c);
  return c;
}

test.before(async () => {
  cloud = await spawnCloud();
  org = await adminJson(cloud.dataDir, ['org', 'create', 'acme']);
  await adminJson(cloud.dataDir, ['org', 'create', 'rival']);
  lab = await adminJson(cloud.dataDir, ['location', 'create', '--org', org.id, '--name', 'lab']);
  yard = await adminJson(cloud.dataDir, ['location', 'create', '--org', org.id, '--name', 'yard']);
  rover = await adminJson<Created>(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover', '--location', yard.id]);
  arm = await adminJson<Created>(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'arm', '--location', lab.id]);
});

test.after.always(async () => {
  for (const c of clients) c.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const names = (machines: Machine[]) => machines.map((m) => m.name);

test('an organization key lists its organization, every location and every machine with its main part', async (t) => {
  const c = await as(await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'operator']));
  const orgs = await call(c.app.listOrganizations.bind(c.app), {}, c.md);
  t.deepEqual(orgs.organizations, [{ id: org.id, name: 'acme' }]);
  const locations = await call(c.app.listLocations.bind(c.app), { organizationId: org.id }, c.md);
  t.deepEqual(
    locations.locations.map((l) => l.name),
    ['lab', 'yard'],
  );
  const all = await call(c.app.listMachines.bind(c.app), { organizationId: org.id, locationId: '' }, c.md);
  t.deepEqual(names(all.machines), ['arm', 'rover']);
  const roverRow = all.machines.find((m) => m.name === 'rover')!;
  t.is(roverRow.locationId, yard.id);
  t.is(roverRow.parts.length, 1);
  t.like(roverRow.parts[0], { id: rover.part_id, name: 'rover-main', mainPart: true, online: false, runtimeVersion: '' });
  const inLab = await call(c.app.listMachines.bind(c.app), { organizationId: org.id, locationId: lab.id }, c.md);
  t.deepEqual(names(inLab.machines), ['arm']);
});

test('a part that reports its status is listed online with its version', async (t) => {
  const c = await as(await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']));
  const part = await partClients(cloud.address, { partId: arm.part_id, secret: arm.part_secret });
  clients.push(part);
  await call(
    part.robot.reportStatus.bind(part.robot),
    { id: arm.part_id, runtimeVersion: '9.9.9', machineState: 'running', configRevision: 0, configError: '', notReady: [], resourceCount: 0 },
    part.md,
  );
  const all = await call(c.app.listMachines.bind(c.app), { organizationId: org.id, locationId: '' }, c.md);
  t.like(all.machines.find((m) => m.name === 'arm')!.parts[0], { online: true, runtimeVersion: '9.9.9' });
});

test('location and machine keys see only their scope; another organization and part tokens are refused', async (t) => {
  const yardKey = await as(await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--location', yard.id, '--role', 'operator']));
  t.deepEqual(
    (await call(yardKey.app.listLocations.bind(yardKey.app), { organizationId: org.id }, yardKey.md)).locations.map((l) => l.id),
    [yard.id],
  );
  t.deepEqual(names((await call(yardKey.app.listMachines.bind(yardKey.app), { organizationId: org.id, locationId: '' }, yardKey.md)).machines), ['rover']);
  const armKey = await as(await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--machine', arm.machine_id, '--role', 'operator']));
  t.deepEqual(
    (await call(armKey.app.listLocations.bind(armKey.app), { organizationId: org.id }, armKey.md)).locations.map((l) => l.id),
    [lab.id],
  );
  t.deepEqual(names((await call(armKey.app.listMachines.bind(armKey.app), { organizationId: org.id, locationId: yard.id }, armKey.md)).machines), []);
  const rivalOrg = await adminJson(cloud.dataDir, ['org', 'create', 'hostile']);
  const rival = await as(await adminJson(cloud.dataDir, ['key', 'create', '--org', rivalOrg.id, '--role', 'owner']));
  const denied = await t.throwsAsync<Error & { code: number }>(
    call(rival.app.listMachines.bind(rival.app), { organizationId: org.id, locationId: '' }, rival.md),
  );
  t.is(denied.code, status.PERMISSION_DENIED);
  t.regex(denied.message, /belongs to another organization/);
  const missing = await t.throwsAsync<Error & { code: number }>(call(rival.app.listLocations.bind(rival.app), { organizationId: '' }, rival.md));
  t.is(missing.code, status.INVALID_ARGUMENT);
  t.regex(missing.message, /organization_id is required/);
  const part = await partClients(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
  clients.push(part);
  const refused = await t.throwsAsync<Error & { code: number }>(call(part.app.listOrganizations.bind(part.app), {}, part.md));
  t.is(refused.code, status.PERMISSION_DENIED);
});
