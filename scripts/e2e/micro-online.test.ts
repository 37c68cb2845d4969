// platform-micro-server online, end to end with the real platform-cloud: started from a credentials
// file, it runs the config saved in the cloud, follows a change live (no restart), reports its status and
// ships its log lines through the machine's one link to the cloud, and starts offline from its cached
// config when the cloud is gone.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnMicro } from '../../core/micro/testing/spawn-micro.js';
import type { ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { credentialsOf, sensor, until, type Machine } from './testing/online-helpers.js';

let cloud: SpawnedCloud;
let dataDir: string;
let rover: Machine;
let owner: PartClients;
const dir = mkdtempSync(join(tmpdir(), 'platform-micro-online-'));
const env = { PLATFORM_ONLINE_DIR: join(dir, 'online'), PLATFORM_ONLINE_RETRY_MAX_MS: '1000' };
const programs: ServingProgram[] = [];

async function readings(program: ServingProgram, name: string): Promise<Record<string, unknown>> {
  const client = new SensorServiceClient(program.address, insecure());
  try {
    return ((await call(client, 'getReadings', { name })) as { readings: Record<string, unknown> }).readings;
  } finally {
    client.close();
  }
}

async function statusOf(
  program: ServingProgram,
): Promise<{ configError: string; resources: { name?: { name: string }; state: ResourceState; error: string }[] }> {
  const client = new RobotServiceClient(program.address, insecure());
  try {
    return await call(client, 'getMachineStatus', {});
  } finally {
    client.close();
  }
}

const saveInCloud = (robotConfig: Record<string, unknown>) =>
  cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: rover.part_id, robotConfig }, owner.md);

test.before(async () => {
  dataDir = tempDataDir();
  cloud = await spawnCloud(dataDir);
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  const ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  owner = await partClients(cloud.address, ownerKey);
  writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ ...credentialsOf(rover, cloud.address), network: { bind_address: '127.0.0.1:0' } }));
});

test.after.always(async () => {
  for (const p of programs) await p.stop();
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
  removeDataDir(dir);
});

test.serial('the cloud config runs; a change saved in the cloud is applied live; status and logs reach the cloud', async (t) => {
  await saveInCloud({ components: [sensor('thermometer', { celsius: 21 })] });
  const micro = await spawnMicro(join(dir, 'credentials.json'), dir, { env });
  programs.push(micro);
  t.deepEqual(await readings(micro, 'thermometer'), { celsius: 21 });
  await saveInCloud({
    components: [
      sensor('thermometer', { celsius: 21 }),
      sensor('hygrometer', { rh: 40 }),
      { name: 'pcd', api: 'core:component:camera', model: 'pcd_file', attributes: { path: '/data/scene.pcd' } },
    ],
  });
  t.deepEqual(await until('the new resource', () => readings(micro, 'hygrometer')), { rh: 40 });
  // The same process: followed on the stream, not restarted.
  t.is(micro.child.exitCode, null);
  t.is(programs.length, 1);
  const pcd = (await statusOf(micro)).resources.find((r) => r.name?.name === 'pcd');
  t.is(pcd?.state, ResourceState.RESOURCE_STATE_UNHEALTHY);
  t.regex(pcd!.error, /needs platform-server/);
  const part = await until('a status report of revision 2 naming pcd', async () => {
    const { part } = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: rover.part_id }, owner.md);
    return part?.online && part.lastStatus?.configRevision === 2 && part.lastStatus.notReady.some((n) => n.name === 'pcd') ? part : undefined;
  });
  t.is(part.lastStatus?.machineState, 'running');
  t.regex(part.runtimeVersion, /^\d+\.\d+\.\d+/);
  const logs = await until('the error line in the cloud logs', async () => {
    const page = await cloudCall(
      owner.app.getRobotPartLogs.bind(owner.app),
      { id: rover.part_id, levels: ['error'], filter: 'cannot be built', pageToken: '', limit: 0 },
      owner.md,
    );
    return page.logs.length ? page.logs : undefined;
  });
  t.is(logs[0].fields?.resource, 'pcd');
  const serving = await cloudCall(
    owner.app.getRobotPartLogs.bind(owner.app),
    { id: rover.part_id, levels: [], filter: 'serving', pageToken: '', limit: 100 },
    owner.md,
  );
  t.true(serving.logs.some((l) => l.loggerName === 'platform.server' && l.message === 'serving'));
});

test.serial('with the cloud gone, a restarted micro-server runs its cached config', async (t) => {
  await programs.pop()!.stop();
  await cloud.stop();
  const micro = await spawnMicro(join(dir, 'credentials.json'), dir, { env });
  programs.push(micro);
  t.deepEqual(await readings(micro, 'hygrometer'), { rh: 40 });
  t.deepEqual(await readings(micro, 'thermometer'), { celsius: 21 });
  t.regex(micro.output(), /cannot reach the cloud/);
});
