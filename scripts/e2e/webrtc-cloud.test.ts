// gRPC over WebRTC through the cloud's signaling, with the real programs: platform-cloud, platform-server
// online as its part, and the TypeScript RobotClient dialing the part by its id with an API key.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import type { ApiKeyCredentials } from '../../cloud/client/connection.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import type { StreamLogsResponse } from '../../gen/platform/robot/v1/robot.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { call } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { credentialsOf, sensor, until, type Machine } from './testing/online-helpers.js';

const components = [
  sensor('thermo', { celsius: 19 }),
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '36', dir: '37' }, max_rpm: 100 } },
];

let cloud: SpawnedCloud;
let dataDir: string;
let rover: Machine;
let lab: Machine;
let owner: PartClients;
let key: ApiKeyCredentials;
let strangerKey: ApiKeyCredentials;
const runtimes: SpawnedRuntime[] = [];
const env = () => ({ PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-webrtc-')), PLATFORM_ONLINE_RETRY_MAX_MS: '1000' });

test.before(async () => {
  dataDir = tempDataDir();
  cloud = await spawnCloud(dataDir);
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  const other = await adminJson(dataDir, ['org', 'create', 'elsewhere']);
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  lab = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'lab']);
  const ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  const operatorKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'operator']);
  const stranger = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', other.id, '--role', 'owner']);
  key = { type: 'api-key', authEntity: operatorKey.id, payload: operatorKey.key };
  strangerKey = { type: 'api-key', authEntity: stranger.id, payload: stranger.key };
  owner = await partClients(cloud.address, ownerKey);
  for (const m of [rover, lab]) await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: m.part_id, robotConfig: { components } }, owner.md);
  runtimes.push(
    await spawnRuntime(credentialsOf(rover, cloud.address), { env: env() }),
    await spawnRuntime(credentialsOf(lab, cloud.address), { env: env(), args: ['-webrtc=false'] }),
  );
});

test.after.always(async () => {
  await Promise.all(runtimes.map((r) => r.stop()));
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
});

const dial = (host: string, credentials: ApiKeyCredentials) => RobotClient.connect({ webrtc: { signalingAddress: cloud.address, host, credentials } });

test.serial('a RobotClient reaches the online machine through the cloud: readings, a server stream and a motor over WebRTC', async (t) => {
  // The machine answers once its config arrived and its Answer stream is up.
  const client = await until('the machine answering through the cloud', () => dial(rover.part_id, key));
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  const sensors = client.service(SensorServiceClient);
  const readings = await until('the sensor', () => call(sensors, 'getReadings', { name: 'thermo' }) as Promise<{ readings: Record<string, unknown> }>);
  t.deepEqual(readings.readings, { celsius: 19 });
  const first = await new Promise<StreamLogsResponse>((resolve, reject) => {
    const stream = client.robot.streamLogs({ minLevel: 'info', backlog: 10 });
    stream.once('data', (r: StreamLogsResponse) => {
      resolve(r);
      stream.cancel();
    });
    stream.on('error', (err: ServiceError) => (err.code === 1 ? undefined : reject(err)));
  });
  t.true(first.lines.length > 0);
  const motors = client.service(MotorServiceClient);
  await call(motors, 'setPower', { name: 'm', powerPct: 0.4 });
  t.true((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  await call(motors, 'stop', { name: 'm' });
  t.false((await call(motors, 'isMoving', { name: 'm' })).isMoving);
});

test.serial('a key of another organization is refused, and never reaches the machine', async (t) => {
  const err = await t.throwsAsync<ServiceError>(dial(rover.part_id, strangerKey));
  t.is(err.code, 7, 'PERMISSION_DENIED');
  t.regex(err.details, /another organization|no access/);
});

test.serial('a machine running with -webrtc=false does not answer: UNAVAILABLE, naming the flag', async (t) => {
  // lab is online (its config arrived) but does not answer.
  await until('lab online', async () =>
    (await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: lab.part_id }, owner.md)).part?.online ? true : undefined,
  );
  const err = await t.throwsAsync<ServiceError>(dial(lab.part_id, key));
  t.is(err.code, 14);
  t.regex(err.details, /-webrtc=false/);
});

test.serial('an unknown part is NOT_FOUND', async (t) => {
  const err = await t.throwsAsync<ServiceError>(dial('no-such-part', key));
  t.is(err.code, 5);
});
