// gRPC over WebRTC relayed through TURN (Debian's coturn on 127.0.0.1): the cloud hands out the relay
// from its setting PLATFORM_WEBRTC_ICE_SERVERS, and a caller with a relay-only ICE policy connects
// through it. The candidate pair ICE selected is read from the connection's stats: its local end must be
// a relay, so the test fails if the connection went any other way. Every step has a bound (t.timeout),
// and whatever was started is closed in after.always, so that nothing here can hold CI.
import test from 'ava';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import type { RobotClient } from '../../cloud/client/robot-client.js';
import { call } from '../../core/server/testing/grpc.js';
import { until } from './testing/online-helpers.js';
import { startCoturn, type Coturn } from './testing/coturn.js';
import { dialLan, driveAndStopMotor, firstLogs, startWebRtcCloud, webrtcComponents, type WebRtcCloud } from './testing/webrtc-harness.js';

let turn: Coturn | undefined;
let env: WebRtcCloud | undefined;
const clients: RobotClient[] = [];

test.before(async (t) => {
  t.timeout(180_000, 'coturn, platform-cloud and platform-server starting');
  turn = await startCoturn();
  env = await startWebRtcCloud({
    components: webrtcComponents(7),
    machines: [{ name: 'rover' }],
    cloudEnv: { PLATFORM_WEBRTC_ICE_SERVERS: JSON.stringify([{ urls: [turn.url], username: turn.username, credential: turn.credential }]) },
  });
});

test.after.always(async () => {
  for (const client of clients) client.close();
  await env?.stop();
  await turn?.stop();
});

test.serial('a relay-only caller reaches the machine through the TURN server the cloud hands out: readings, a server stream and a motor', async (t) => {
  t.timeout(120_000, 'dialing through the relay and calling over it');
  const { machines, key } = env!;
  // The machine answers once its config arrived and its Answer stream is up.
  const client = await until(
    'the machine answering through the cloud',
    () => env!.dial(machines.rover.part_id, key, { relayOnly: true, timeoutMs: 15_000 }),
    90_000,
  );
  clients.push(client);
  t.is(client.transport, 'webrtc');
  const readings = await until(
    'the sensor',
    () => call(client.service(SensorServiceClient), 'getReadings', { name: 'thermo' }) as Promise<{ readings: unknown }>,
  );
  t.deepEqual(readings.readings, { celsius: 7 });
  t.true((await firstLogs(client)).lines.length > 0);
  await driveAndStopMotor(t, client, 0.3);

  const route = await client.webrtcRoute();
  t.log('selected candidate pair:', JSON.stringify(route));
  t.is(route?.local.type, 'relay', 'the caller sends through its TURN relay');
  const [, port] = /^turn:127\.0\.0\.1:(\d+)/.exec(turn!.url)!;
  t.not(route?.local.port, Number(port), "the relay's own port on the TURN server, not its listening port");
  t.true((route?.bytesSent ?? 0) > 0 && (route?.bytesReceived ?? 0) > 0, 'the calls went over that pair');
  // coturn allocated a relay for the caller and was asked for permission to the machine.
  t.regex(turn!.output(), /ALLOCATE processed, success/);
  t.regex(turn!.output(), /(CREATE_PERMISSION|CHANNEL_BIND) processed, success/);
});

test.serial('relay-only needs a relay: without one it is refused at once, not quietly made a host connection', async (t) => {
  t.timeout(30_000);
  // The machine's own signaling hands out no ICE servers.
  await t.throwsAsync(dialLan(env!.machines.rover.runtime.address, { relayOnly: true }), {
    message: /^relayOnly: no TURN server to relay through/,
  });
});

test.serial('relay-only with a TURN server that refuses the credentials fails, naming the server', async (t) => {
  t.timeout(60_000);
  const bad = [{ urls: [turn!.url], username: turn!.username, credential: 'wrong' }];
  await t.throwsAsync(dialLan(env!.machines.rover.runtime.address, { relayOnly: true, iceServers: bad, timeoutMs: 40_000 }), {
    message: /^relayOnly: the TURN server \(turn:127\.0\.0\.1:\d+\?transport=udp\) gave no relay/,
  });
});
