// gRPC over WebRTC on the LAN, with the real platform-server: the TypeScript RobotClient signals through
// the machine's own gRPC port (SignalingService there), then every call runs over the data channel.
import test from 'ava';
import type { ServiceError } from '@grpc/grpc-js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { assertNoLanSignaling, dialLan, driveAndStopMotor, firstLogs, webrtcComponents } from './testing/webrtc-harness.js';

const components = webrtcComponents(21);

let runtime: SpawnedRuntime;
let offline: SpawnedRuntime;

test.before(async () => {
  [runtime, offline] = await Promise.all([spawnRuntime({ components }), spawnRuntime({ components }, { args: ['-webrtc=false'] })]);
});

test.after.always(async () => {
  await Promise.all([runtime?.stop(), offline?.stop()]);
});

test.serial('a RobotClient dials the machine through its own signaling and reads, streams and drives a motor over the data channel', async (t) => {
  const client = await dialLan(runtime.address);
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  t.truthy(client.session, 'the session started over the data channel');
  const sensors = client.service(SensorServiceClient);
  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { celsius: 21 });
  // A server stream: the runtime's log lines, the backlog first.
  t.true((await firstLogs(client)).lines.length > 0);
  await driveAndStopMotor(t, client, 0.5);
  // Errors keep their code over the channel: an unknown resource.
  const err = await t.throwsAsync<ServiceError>(call(sensors, 'getReadings', { name: 'nope' }));
  t.is(err.code, 5);
});

test.serial('with -webrtc=false the machine does not answer: the dial fails, or falls back to the direct connection', async (t) => {
  await assertNoLanSignaling(t, offline.address);
  const reasons: Error[] = [];
  const client = await RobotClient.connect({
    address: offline.address,
    webrtc: { signalingAddress: offline.address, host: 'this-machine' },
    onWebRtcFallback: (e) => reasons.push(e),
  });
  t.teardown(() => client.close());
  t.is(client.transport, 'direct');
  t.is(reasons.length, 1);
  t.deepEqual((await call(client.service(SensorServiceClient), 'getReadings', { name: 'thermo' })).readings, { celsius: 21 });
});
