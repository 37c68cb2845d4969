// gRPC over WebRTC on the LAN with the real platform-micro-server, as shipped (the bundle, built here):
// the same shared gRPC server as platform-server answers offers through SignalingService on its port, and
// calls run over the data channel in the micro-server's one process; with -webrtc=false it does not answer.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceError } from '@grpc/grpc-js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { call } from '../../core/server/testing/grpc.js';
import { spawnMicro } from '../../core/micro/testing/spawn-micro.js';
import { buildMicro } from '../build-micro.mjs';
import type { ServingProgram } from '../../core/shared/testing/spawn-serving.js';

const components = [
  { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { celsius: 21 } } },
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '36', dir: '37' }, max_rpm: 100 } },
];

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
  const client = await RobotClient.connect({ webrtc: { signalingAddress: micro.address, host: 'this-machine' } });
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  const sensors = client.service(SensorServiceClient);
  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { celsius: 21 });
  const motors = client.service(MotorServiceClient);
  await call(motors, 'setPower', { name: 'm', powerPct: 0.5 });
  t.true((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  await call(motors, 'stop', { name: 'm' });
  t.false((await call(motors, 'isMoving', { name: 'm' })).isMoving);
  const err = await t.throwsAsync<ServiceError>(call(sensors, 'getReadings', { name: 'nope' }));
  t.is(err.code, 5);
});

test.serial('with -webrtc=false the micro-server does not answer WebRTC', async (t) => {
  const err = await t.throwsAsync<ServiceError>(RobotClient.connect({ webrtc: { signalingAddress: offline.address, host: 'this-machine' } }));
  t.is(err.code, 12, 'SignalingService is not served (UNIMPLEMENTED)');
});
