// gRPC over WebRTC on the LAN with the real platform-micro-server, as shipped (the bundle, built here):
// the same shared gRPC server as platform-server answers offers through SignalingService on its port, and
// calls run over the data channel in the micro-server's one process; with -webrtc=false it does not answer.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call } from '../../core/server/testing/grpc.js';
import { spawnMicro } from '../../core/micro/testing/spawn-micro.js';
import { buildMicro } from '../build-micro.mjs';
import type { ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { assertNoLanSignaling, dialLan, driveAndStopMotor, webrtcComponents } from './testing/webrtc-harness.js';

const components = webrtcComponents(21);

let micro: ServingProgram;
let offline: ServingProgram;

test.before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-micro-webrtc-'));
  const configPath = join(dir, 'machine.json');
  writeFileSync(configPath, JSON.stringify({ network: { bind_address: '127.0.0.1:0' }, components }));
  const bundle = join(dir, 'platform-micro-server.mjs');
  await buildMicro(bundle);
  [micro, offline] = await Promise.all([spawnMicro(configPath, dir, { bundle }), spawnMicro(configPath, dir, { bundle, args: ['-webrtc=false'] })]);
});

test.after.always(async () => {
  await Promise.all([micro?.stop(), offline?.stop()]);
});

test.serial('a RobotClient dials the micro-server through its own signaling and reads and drives a motor over the data channel', async (t) => {
  const client = await dialLan(micro.address);
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  const sensors = client.service(SensorServiceClient);
  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { celsius: 21 });
  await driveAndStopMotor(t, client, 0.5);
  const err = await t.throwsAsync<ServiceError>(call(sensors, 'getReadings', { name: 'nope' }));
  t.is(err.code, 5);
});

test.serial('with -webrtc=false the micro-server does not answer WebRTC', async (t) => {
  await assertNoLanSignaling(t, offline.address);
});
