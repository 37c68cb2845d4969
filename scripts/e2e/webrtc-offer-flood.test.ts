// A flood of half-open offers (issue 30's hostile input), against the real programs: thousands of offers
// that never complete ICE (answers read and left, Call streams abandoned at once, malformed SDPs) sent to
// the runtime's own signaling on the LAN and to the cloud's SignalingService for an online machine. Neither
// process dies, the bounds answer (at most 128 peers at the machine, the oldest still-connecting one giving
// way, a malformed SDP refused as INVALID_ARGUMENT), a legitimate client dials and reads during and after
// the flood, every peer is closed once the flood settles (the machine's UDP sockets, read from /proc, go
// back), and a key of another organization never reaches the machine. The connect timeout is shortened
// (PLATFORM_WEBRTC_CONNECT_TIMEOUT_MS) so that the flood settles in seconds.
import test, { type ExecutionContext } from 'ava';
import type { Metadata } from '@grpc/grpc-js';
import { CloudConnection, type ApiKeyCredentials } from '../../cloud/client/connection.js';
import type { RobotClient } from '../../cloud/client/robot-client.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { SignalingServiceClient } from '../../gen/platform/rpc/webrtc/v1/signaling.js';
import { MAX_PEERS } from '../../core/webrtc/answerer.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { until } from './testing/online-helpers.js';
import { floodOffers, rssMiB, sampleOffer, udpSockets, type Flood, type FloodResult } from './testing/offer-flood.js';
import { dialLan, startWebRtcCloud, webrtcComponents, type WebRtcCloud } from './testing/webrtc-harness.js';

/** Offers sent to each signaling service (3,000 in all): most half-open, every 5th abandoned, every 7th malformed (offer-flood.ts). */
const OFFERS = 1500;
const IN_FLIGHT = 96;
const CONNECT_TIMEOUT_MS = 3000;
const machineEnv = { PLATFORM_WEBRTC_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) };
const components = webrtcComponents(22);

let lan: SpawnedRuntime;
let cloud: WebRtcCloud;
let offer: string;

test.before(async () => {
  [lan, cloud, offer] = await Promise.all([
    spawnRuntime({ components }, { env: machineEnv }),
    startWebRtcCloud({ components, machines: [{ name: 'rover', env: machineEnv }] }),
    sampleOffer(),
  ]);
});

test.after.always(async () => {
  await Promise.all([lan?.stop(), cloud?.stop()]);
});

/** A legitimate client's work over WebRTC: the sensor's readings. */
async function readOver(client: RobotClient): Promise<unknown> {
  try {
    return ((await call(client.service(SensorServiceClient), 'getReadings', { name: 'thermo' })) as { readings: unknown }).readings;
  } finally {
    client.close();
  }
}

/** Samples a process's UDP sockets and memory while `flood` runs; the peaks. */
function watch(pid: number): { stop(): { udp: number; rssMiB: number } } {
  const peak = { udp: udpSockets(pid), rssMiB: rssMiB(pid) };
  const timer = setInterval(() => {
    peak.udp = Math.max(peak.udp, udpSockets(pid));
    peak.rssMiB = Math.max(peak.rssMiB, rssMiB(pid));
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/** While the flood runs, once a third is sent: a legitimate dial succeeds (it may be retried: a flood may take its place once). */
async function dialDuring(flood: Flood, dial: () => Promise<RobotClient>): Promise<unknown> {
  await until('a third of the flood sent', async () => (flood.sent() >= OFFERS / 3 ? true : undefined), 120_000);
  return until('a legitimate dial during the flood', async () => readOver(await dial()), 120_000);
}

function checkOutcomes(t: ExecutionContext, result: FloodResult, allowed: { halfOpen: string[] }) {
  t.log(JSON.stringify(result.outcomes));
  for (const outcome of Object.keys(result.outcomes['half-open'])) t.true(allowed.halfOpen.includes(outcome), `half-open offer: ${outcome}`);
  for (const outcome of Object.keys(result.outcomes.abandoned))
    t.true(['answered', 'cancelled', ...allowed.halfOpen].includes(outcome), `abandoned: ${outcome}`);
  // A malformed SDP is refused for what it is, never taken for a full house.
  t.deepEqual(Object.keys(result.outcomes.malformed), ['code 3']);
}

/** The machine's UDP sockets go back to what it held before the flood: every peer of it closed. */
async function settles(t: ExecutionContext, runtime: SpawnedRuntime, before: number) {
  const pid = runtime.process.pid!;
  // One read a try: a socket may open between two reads (the runtime's mDNS, a DNS lookup).
  const after = await until(
    'the flood settled',
    async () => {
      const now = udpSockets(pid);
      return now <= before ? now : undefined;
    },
    10 * CONNECT_TIMEOUT_MS + 30_000,
  );
  t.true(after <= before);
  t.is(runtime.process.exitCode, null, 'the machine is running');
}

test.serial("the runtime's own signaling under a flood of half-open offers: bounded, no lock-out, every peer freed", async (t) => {
  const pid = lan.process.pid!;
  const before = udpSockets(pid);
  const rssBefore = rssMiB(pid);
  const signaling = new SignalingServiceClient(lan.address, insecure());
  t.teardown(() => signaling.close());
  const watching = watch(pid);
  const flood = floodOffers(signaling, offer, OFFERS, IN_FLIGHT);
  t.deepEqual(await dialDuring(flood, () => dialLan(lan.address)), { celsius: 22 });
  const result = await flood.done;
  const peak = watching.stop();
  // Every offer that parsed was answered: the oldest half-open peer gives way, none is refused.
  checkOutcomes(t, result, { halfOpen: ['answered'] });
  // At most MAX_PEERS peers at once: werift holds two UDP sockets a peer here (one per host address);
  // three a peer is the ceiling this allows, against the thousands an unbounded answerer would hold.
  t.true(peak.udp <= 3 * MAX_PEERS, `peak UDP sockets ${peak.udp}`);
  // Right after the flood, at the first try: the flood's half-open peers give way.
  t.deepEqual(await readOver(await dialLan(lan.address)), { celsius: 22 });
  await settles(t, lan, before);
  // A direct client too: the runtime did not stall.
  const sensors = new SensorServiceClient(lan.address, insecure());
  t.teardown(() => sensors.close());
  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { celsius: 22 });
  t.log(
    `runtime: peak ${peak.udp} UDP sockets (before ${before}), RSS ${rssBefore.toFixed(0)} -> peak ${peak.rssMiB.toFixed(0)} MiB -> ${rssMiB(pid).toFixed(0)} MiB settled`,
  );
  t.true(peak.rssMiB - rssBefore < 512, 'memory bounded');
});

async function keyMetadata(key: ApiKeyCredentials, host: string): Promise<{ md: Metadata; close(): void }> {
  const connection = new CloudConnection({ serviceHost: cloud.cloud.address, credentials: key });
  const md = await connection.metadata();
  md.set('rpc-host', host);
  return { md, close: () => connection.close() };
}

test.serial("the cloud's signaling under a flood of half-open offers: bounded, no lock-out, another organization never reaches the machine", async (t) => {
  const rover = cloud.machines.rover;
  const machinePid = rover.runtime.process.pid!;
  const cloudPid = cloud.cloud.child.pid!;
  const dial = () => cloud.dial(rover.part_id, cloud.key);
  // The machine answers through the cloud before the flood starts.
  t.deepEqual(await until('the machine answering through the cloud', async () => readOver(await dial())), { celsius: 22 });
  await settles(t, rover.runtime, 1);
  const before = udpSockets(machinePid);
  const cloudRssBefore = rssMiB(cloudPid);
  const signaling = new SignalingServiceClient(cloud.cloud.address, insecure());
  t.teardown(() => signaling.close());

  // Another organization's flood: every offer refused, and the machine makes no peer for any.
  const stranger = await keyMetadata(cloud.strangerKey, rover.part_id);
  t.teardown(() => stranger.close());
  const machineWatch = watch(machinePid);
  const refused = await floodOffers(signaling, offer, 300, IN_FLIGHT, stranger.md).done;
  t.deepEqual(refused.outcomes['half-open'], { 'code 7': Object.values(refused.outcomes['half-open']).reduce((a, b) => a + b, 0) });
  t.true(
    Object.keys(refused.outcomes.malformed).every((o) => o === 'code 7'),
    'refused before its SDP is read',
  );
  // A peer holds two sockets; one more than before may be the runtime's own (mDNS, a DNS lookup).
  const strangerPeak = machineWatch.stop().udp;
  t.true(strangerPeak <= before + 1, `no peer was made at the machine for another organization (${strangerPeak} UDP sockets, ${before} before)`);

  const own = await keyMetadata(cloud.key, rover.part_id);
  t.teardown(() => own.close());
  const cloudWatch = watch(cloudPid);
  const watching = watch(machinePid);
  const flood = floodOffers(signaling, offer, OFFERS, IN_FLIGHT, own.md);
  t.deepEqual(await dialDuring(flood, dial), { celsius: 22 });
  const result = await flood.done;
  const peak = watching.stop();
  const cloudPeak = cloudWatch.stop();
  // Answered; refused by the cloud's bound of 64 waiting offers a machine (RESOURCE_EXHAUSTED); or, on a
  // busy machine, not answered within the cloud's 10 s (DEADLINE_EXCEEDED).
  checkOutcomes(t, result, { halfOpen: ['answered', 'code 8', 'code 4'] });
  t.true(peak.udp <= 3 * MAX_PEERS, `peak UDP sockets at the machine ${peak.udp}`);
  // Right after the flood, at the first try: answered calls that never finish do not hold the machine's places.
  t.deepEqual(await readOver(await dial()), { celsius: 22 });
  await settles(t, rover.runtime, before);
  t.is(cloud.cloud.child.exitCode, null, 'the cloud is running');
  t.log(
    `machine: peak ${peak.udp} UDP sockets (before ${before}); cloud RSS ${cloudRssBefore.toFixed(0)} -> peak ${cloudPeak.rssMiB.toFixed(0)} -> ${rssMiB(cloudPid).toFixed(0)} MiB`,
  );
  t.true(cloudPeak.rssMiB - cloudRssBefore < 512, "the cloud's memory bounded");
});
