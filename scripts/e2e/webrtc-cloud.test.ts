// gRPC over WebRTC through the cloud's signaling, with the real programs: platform-cloud, platform-server
// online as its part, and the TypeScript RobotClient dialing the part by its id with an API key.
import test from 'ava';
import type { ServiceError } from '@grpc/grpc-js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call as cloudCall } from '../../cloud/parts/testing/part-clients.js';
import { call } from '../../core/server/testing/grpc.js';
import { until } from './testing/online-helpers.js';
import { driveAndStopMotor, firstLogs, startWebRtcCloud, webrtcComponents, type WebRtcCloud } from './testing/webrtc-harness.js';

let env: WebRtcCloud;

test.before(async () => {
  // lab is online but does not answer WebRTC.
  env = await startWebRtcCloud({ components: webrtcComponents(19), machines: [{ name: 'rover' }, { name: 'lab', args: ['-webrtc=false'] }] });
});

test.after.always(async () => {
  await env?.stop();
});

test.serial('a RobotClient reaches the online machine through the cloud: readings, a server stream and a motor over WebRTC', async (t) => {
  // The machine answers once its config arrived and its Answer stream is up.
  const client = await until('the machine answering through the cloud', () => env.dial(env.machines.rover.part_id, env.key));
  t.teardown(() => client.close());
  t.is(client.transport, 'webrtc');
  const sensors = client.service(SensorServiceClient);
  const readings = await until('the sensor', () => call(sensors, 'getReadings', { name: 'thermo' }) as Promise<{ readings: Record<string, unknown> }>);
  t.deepEqual(readings.readings, { celsius: 19 });
  t.true((await firstLogs(client)).lines.length > 0);
  await driveAndStopMotor(t, client, 0.4);
});

test.serial('a key of another organization is refused, and never reaches the machine', async (t) => {
  const err = await t.throwsAsync<ServiceError>(env.dial(env.machines.rover.part_id, env.strangerKey));
  t.is(err.code, 7, 'PERMISSION_DENIED');
  t.regex(err.details, /another organization|no access/);
});

test.serial('a machine running with -webrtc=false does not answer: UNAVAILABLE, naming the flag', async (t) => {
  const { owner, machines } = env;
  await until('lab online', async () =>
    (await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: machines.lab.part_id }, owner.md)).part?.online ? true : undefined,
  );
  const err = await t.throwsAsync<ServiceError>(env.dial(machines.lab.part_id, env.key));
  t.is(err.code, 14);
  t.regex(err.details, /-webrtc=false/);
});

test.serial('an unknown part is NOT_FOUND', async (t) => {
  const err = await t.throwsAsync<ServiceError>(env.dial('no-such-part', env.key));
  t.is(err.code, 5);
});
