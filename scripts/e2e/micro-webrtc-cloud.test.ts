// gRPC over WebRTC through the cloud's signaling with the real platform-micro-server as shipped (the
// bundle, built here) online as its part, the real platform-cloud, and the TypeScript RobotClient dialing
// the part by its id with an API key: the micro-server holds SignalingService/Answer open over its one
// link to the cloud (core/webrtc/cloud-answerer.ts, the code platform-server runs) and serves the calls
// of the data channel in its one process. With -webrtc=false it does not answer.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import type { ApiKeyCredentials } from '../../cloud/client/connection.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { call } from '../../core/server/testing/grpc.js';
import { spawnMicro } from '../../core/micro/testing/spawn-micro.js';
import type { ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { buildMicro } from '../build-micro.mjs';
import { credentialsOf, sensor, until, type Machine } from './testing/online-helpers.js';

const components = [
  sensor('thermo', { celsius: 17 }),
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '36', dir: '37' }, max_rpm: 100 } },
];

const dir = mkdtempSync(join(tmpdir(), 'platform-micro-webrtc-cloud-'));
let cloud: SpawnedCloud;
let dataDir: string;
let rover: Machine;
let lab: Machine;
let owner: PartClients;
let key: ApiKeyCredentials;
const programs: ServingProgram[] = [];

/** A credentials-only config of `m` (its own online cache folder), binding a free local port. */
function credentialsFile(m: Machine, name: string): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ ...credentialsOf(m, cloud.address), network: { bind_address: '127.0.0.1:0' } }));
  return path;
}

test.before(async () => {
  dataDir = tempDataDir();
  const bundle = join(dir, 'platform-micro-server.mjs');
  [cloud] = await Promise.all([spawnCloud(dataDir), buildMicro(bundle)]);
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  lab = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'lab']);
  const ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  const operatorKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'operator']);
  key = { type: 'api-key', authEntity: operatorKey.id, payload: operatorKey.key };
  owner = await partClients(cloud.address, ownerKey);
  for (const m of [rover, lab]) await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: m.part_id, robotConfig: { components } }, owner.md);
  const env = (name: string) => ({ PLATFORM_ONLINE_DIR: join(dir, `online-${name}`), PLATFORM_ONLINE_RETRY_MAX_MS: '1000' });
  programs.push(
    ...(await Promise.all([
      spawnMicro(credentialsFile(rover, 'rover'), dir, { bundle, env: env('rover') }),
      spawnMicro(credentialsFile(lab, 'lab'), dir, { bundle, env: env('lab'), args: ['-webrtc=false'] }),
    ])),
  );
});

test.after.always(async () => {
  await Promise.all(programs.map((p) => p.stop()));
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
  removeDataDir(dir);
});

const dial = (host: string) => RobotClient.connect({ webrtc: { signalingAddress: cloud.address, host, credentials: key } });

test.serial('a RobotClient reaches the online micro-server through the cloud: readings and a motor over WebRTC', async (t) => {
  // The micro-server answers once its config arrived and its Answer stream is up.
  const client = await until('the micro-server answering through the cloud', () => dial(rover.part_id));
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  const sensors = client.service(SensorServiceClient);
  const readings = await until('the sensor', () => call(sensors, 'getReadings', { name: 'thermo' }) as Promise<{ readings: Record<string, unknown> }>);
  t.deepEqual(readings.readings, { celsius: 17 });
  const motors = client.service(MotorServiceClient);
  await call(motors, 'setPower', { name: 'm', powerPct: 0.4 });
  t.true((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  await call(motors, 'stop', { name: 'm' });
  t.false((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  const err = await t.throwsAsync<ServiceError>(call(sensors, 'getReadings', { name: 'nope' }));
  t.is(err.code, 5, 'NOT_FOUND from the micro-server, over the data channel');
});

test.serial('a micro-server running with -webrtc=false does not answer through the cloud: UNAVAILABLE, naming the flag', async (t) => {
  // lab is online (its config arrived) but holds no Answer stream.
  await until('lab online', async () =>
    (await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: lab.part_id }, owner.md)).part?.online ? true : undefined,
  );
  const err = await t.throwsAsync<ServiceError>(dial(lab.part_id));
  t.is(err.code, 14);
  t.regex(err.details, /-webrtc=false/);
});
