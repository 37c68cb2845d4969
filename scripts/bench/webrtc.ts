// npm run bench:webrtc — gRPC over WebRTC against direct gRPC in the same run, from the built programs
// (issue 30's targets in brackets):
//  1. connection set-up: a dial through the cloud's signaling (platform-cloud, platform-server online),
//     through the machine's own port (LAN), and relay-only through coturn when `turnserver` is installed;
//     p50/p90 over BENCH_DIALS (default 20) dials each, to the data channel open and to the first answer
//     [p50 <= 1 s on loopback]. The anchor: a direct gRPC connection's first answer.
//  2. unary GetReadings of a fake sensor, p50/p99 over BENCH_CALLS (default 2000) calls one at a time,
//     over the data channel and direct [p50 <= 2 ms and <= 3x direct].
//  3. a 10 MB server stream (100 messages of 100,000 bytes) over the data channel and direct: MB/s, and
//     the longest gap between two messages [>= 5 MB/s, no stall]. The runtime serves no streaming
//     method that carries bulk data (StreamLogs is a few lines), so the stream comes from a gRPC server in
//     a process of its own (webrtc-stream-server.ts), answered through the same code as the runtime's:
//     WebRtcAnswerer, the channel server bridging to a gRPC server, the framing and the client's channel.
//  4. the cloud returning after kill -9: from its serving line to the machine answering a WebRTC dial
//     through it again [within 5 s], BENCH_OUTAGES (default 3) rounds.
// BENCH_ONLY=stream runs the stream alone (no cloud, no runtime).
import { Client, credentials } from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { RobotClient } from '../../cloud/client/robot-client.js';
import { dialWebRtc, type SignalingDialOptions } from '../../cloud/client/webrtc-dial.js';
import { call as cloudCall, partClients } from '../../cloud/parts/testing/part-clients.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { startCoturn, type Coturn } from '../e2e/testing/coturn.js';
import { STREAM_MESSAGES, STREAM_MESSAGE_BYTES, STREAM_METHOD } from './webrtc-stream-server.js';

const SERVER = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const STREAM_SERVER = fileURLToPath(new URL('./webrtc-stream-server.js', import.meta.url));
const run = promisify(execFile);
const DIALS = Number(process.env.BENCH_DIALS) || 20;
const CALLS = Number(process.env.BENCH_CALLS) || 2000;
const OUTAGES = Number(process.env.BENCH_OUTAGES ?? 3);

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};
const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const unary = <T>(start: (cb: (err: Error | null, res: T) => void) => void) =>
  new Promise<T>((resolve, reject) => start((err, res) => (err ? reject(err) : resolve(res))));

/** Set-up times of `DIALS` dials: to the data channel open, and to the first GetReadings answered over it. */
async function dials(what: string, options: SignalingDialOptions): Promise<{ open: number[]; first: number[] }> {
  const open: number[] = [];
  const first: number[] = [];
  for (let i = 0; i < DIALS; i++) {
    const t0 = performance.now();
    const client = await RobotClient.connect({ webrtc: options, session: false });
    const t1 = performance.now();
    const sensors = client.service(SensorServiceClient);
    await unary((cb) => sensors.getReadings({ name: 'thermo' }, cb));
    first.push(performance.now() - t0);
    open.push(t1 - t0);
    client.close();
  }
  console.log(
    `set-up ${what}: channel open p50 ${ms(pct(open, 50))}, p90 ${ms(pct(open, 90))}; first answer p50 ${ms(pct(first, 50))}, p90 ${ms(pct(first, 90))} ` +
      `[p50 <= 1 s: ${met(pct(first, 50) <= 1000)}]`,
  );
  return { open, first };
}

/** GetReadings one at a time: latencies in ms, after a warm-up. */
async function unaryLatencies(client: RobotClient): Promise<number[]> {
  const sensors = client.service(SensorServiceClient);
  const once = () => unary((cb) => sensors.getReadings({ name: 'thermo' }, cb));
  for (let i = 0; i < 200; i++) await once();
  const out: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await once();
    out.push(performance.now() - t0);
  }
  return out;
}

const passthrough = (b: Buffer) => b;

/** Reads the 10 MB stream: MB/s from the call's start to its end, and the longest gap between messages. */
async function readStream(client: Client): Promise<{ mbPerS: number; longestGapMs: number; firstMs: number }> {
  const t0 = performance.now();
  const arrivals: number[] = [];
  let bytes = 0;
  const sizes = new Set<number>();
  await new Promise<void>((resolve, reject) => {
    const stream = client.makeServerStreamRequest(STREAM_METHOD.path, passthrough, passthrough, Buffer.alloc(0));
    stream.on('data', (m: Buffer) => {
      arrivals.push(performance.now());
      bytes += m.length;
      sizes.add(m.length);
    });
    stream.on('error', reject);
    stream.on('end', resolve);
  });
  if (bytes !== STREAM_MESSAGES * STREAM_MESSAGE_BYTES) {
    throw new Error(`stream: ${bytes} bytes arrived in ${arrivals.length} messages of ${[...sizes].join(', ')} bytes`);
  }
  const seconds = (arrivals.at(-1)! - t0) / 1000;
  let longestGapMs = 0;
  for (let i = 1; i < arrivals.length; i++) longestGapMs = Math.max(longestGapMs, arrivals[i] - arrivals[i - 1]);
  return { mbPerS: bytes / 1e6 / seconds, longestGapMs, firstMs: arrivals[0] - t0 };
}

async function benchStream(): Promise<void> {
  // The stream's server runs in a process of its own, as a machine would: the caller's and the answerer's
  // WebRTC stacks do not share one thread.
  const server = await spawnServing(STREAM_SERVER, [], { name: 'webrtc-stream-server' });
  const direct = new Client(server.address, credentials.createInsecure());
  const conn = await dialWebRtc({ signalingAddress: server.address, host: 'bench' });
  const overChannel = new Client('webrtc.invalid:1', credentials.createInsecure(), { interceptors: [conn.channel.interceptor] });
  try {
    const rounds = 3;
    const best = async (c: Client) => {
      const results = [];
      for (let i = 0; i < rounds; i++) results.push(await readStream(c));
      // The best first; the rest in the order they ran.
      const best = results.reduce((a, b) => (b.mbPerS > a.mbPerS ? b : a));
      return [best, ...results];
    };
    const d = await best(direct);
    const w = await best(overChannel);
    const line = (r: { mbPerS: number; longestGapMs: number; firstMs: number }) =>
      `${r.mbPerS.toFixed(1)} MB/s, longest gap ${ms(r.longestGapMs)}, first message ${ms(r.firstMs)}`;
    console.log(`10 MB server stream (${STREAM_MESSAGES} x ${STREAM_MESSAGE_BYTES} bytes), best of ${rounds}; every round's MB/s in brackets, in order:`);
    console.log(
      `  direct gRPC (anchor): ${line(d[0])} [${d
        .slice(1)
        .map((r) => r.mbPerS.toFixed(1))
        .join(', ')}]`,
    );
    console.log(
      `  WebRTC data channel:  ${line(w[0])} [${w
        .slice(1)
        .map((r) => r.mbPerS.toFixed(1))
        .join(', ')}]`,
    );
    console.log(
      `  ratio WebRTC/direct ${(w[0].mbPerS / d[0].mbPerS).toFixed(2)}; [>= 5 MB/s: ${met(w[0].mbPerS >= 5)}; ` +
        `worst round's longest gap ${ms(Math.max(...w.slice(1).map((r) => r.longestGapMs)))}]`,
    );
  } finally {
    direct.close();
    overChannel.close();
    conn.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  console.log(`load average at start: ${loadavg()[0].toFixed(1)}`);
  if (process.env.BENCH_ONLY === 'stream') return benchStream();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webrtc-cloud-'));
  const onlineDir = mkdtempSync(join(tmpdir(), 'bench-webrtc-'));
  const serve = (port: string) => spawnServing(CLOUD, ['serve', '--data-dir', dataDir, '--port', port], { name: 'platform-cloud' });
  let cloud: ServingProgram = await serve('0');
  const address = cloud.address;
  const port = address.slice(address.lastIndexOf(':') + 1);
  const admin = async <T>(...args: string[]) => JSON.parse((await run(process.execPath, [CLOUD, ...args, '--data-dir', dataDir, '--json'])).stdout) as T;
  const org = await admin<{ id: string }>('org', 'create', 'bench');
  const machine = await admin<{ part_id: string; part_secret: string }>('machine', 'create', '--org', org.id, '--name', 'bench');
  const ownerKey = await admin<{ id: string; key: string }>('key', 'create', '--org', org.id, '--role', 'owner');
  const owner = await partClients(address, ownerKey);
  const thermo = { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { celsius: 21 } } };
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: machine.part_id, robotConfig: { components: [thermo] } }, owner.md);
  owner.close();
  const credsFile = join(onlineDir, 'credentials.json');
  writeFileSync(
    credsFile,
    JSON.stringify({ cloud: { id: machine.part_id, secret: machine.part_secret, app_address: address }, network: { bind_address: 'localhost:0' } }),
  );
  const runtime = await spawnServing(SERVER, ['-config', credsFile], {
    name: 'platform-server',
    servingLine: /platform-server serving on (\S+)/,
    env: { ...process.env, PLATFORM_ONLINE_DIR: onlineDir, PLATFORM_FTDC_DIR: join(onlineDir, 'ftdc'), PLATFORM_ONLINE_RETRY_MAX_MS: '1000' },
  });
  const key = { type: 'api-key' as const, authEntity: ownerKey.id, payload: ownerKey.key };
  const viaCloud: SignalingDialOptions = { signalingAddress: address, host: machine.part_id, credentials: key };
  let turn: Coturn | undefined;
  try {
    // The machine answers once its config arrived and its Answer stream is up.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        (await RobotClient.connect({ webrtc: viaCloud, session: false })).close();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(200);
      }
    }

    // 1. Set-up.
    const directFirst: number[] = [];
    for (let i = 0; i < DIALS; i++) {
      const t0 = performance.now();
      const client = await RobotClient.connect({ address: runtime.address, session: false });
      await unary((cb) => client.service(SensorServiceClient).getReadings({ name: 'thermo' }, cb));
      directFirst.push(performance.now() - t0);
      client.close();
    }
    console.log(`set-up direct gRPC (anchor): first answer p50 ${ms(pct(directFirst, 50))}, p90 ${ms(pct(directFirst, 90))}`);
    await dials("through the cloud's signaling", viaCloud);
    await dials("on the LAN (the machine's own signaling)", { signalingAddress: runtime.address, host: 'bench' });
    try {
      turn = await startCoturn();
    } catch (err) {
      console.log(`set-up relay-only: skipped (${(err as Error).message.split('\n')[0]})`);
    }
    if (turn) {
      const iceServers = [{ urls: [turn.url], username: turn.username, credential: turn.credential }];
      await dials('relay-only through coturn, signaled through the cloud', { ...viaCloud, iceServers, relayOnly: true });
    }

    // 2. Unary.
    const rtc = await RobotClient.connect({ webrtc: viaCloud, session: false });
    const direct = await RobotClient.connect({ address: runtime.address, session: false });
    const d = await unaryLatencies(direct);
    const w = await unaryLatencies(rtc);
    rtc.close();
    direct.close();
    console.log(`unary GetReadings, ${CALLS} calls one at a time:`);
    console.log(`  direct gRPC (anchor): p50 ${ms(pct(d, 50))}, p99 ${ms(pct(d, 99))}`);
    console.log(`  WebRTC data channel:  p50 ${ms(pct(w, 50))}, p99 ${ms(pct(w, 99))}`);
    const ratio = pct(w, 50) / pct(d, 50);
    console.log(
      `  ratio p50 ${ratio.toFixed(2)}x, p99 ${(pct(w, 99) / pct(d, 99)).toFixed(2)}x [p50 <= 2 ms: ${met(pct(w, 50) <= 2)}; <= 3x direct: ${met(ratio <= 3)}]`,
    );

    // 3. The 10 MB stream.
    await benchStream();

    // 4. The cloud returning.
    const backs: number[] = [];
    for (let round = 0; round < OUTAGES; round++) {
      await cloud.kill9();
      await sleep(3000);
      cloud = await serve(port);
      const back = performance.now();
      for (;;) {
        try {
          (await RobotClient.connect({ webrtc: { ...viaCloud, timeoutMs: 5000 }, session: false })).close();
          break;
        } catch (err) {
          if (performance.now() - back > 60_000) throw err;
          await sleep(100);
        }
      }
      backs.push(performance.now() - back);
    }
    if (backs.length) {
      console.log(
        `after kill -9 of the cloud and its return (${OUTAGES} rounds, 3 s down): WebRTC through it again after ${backs.map((b) => `${(b / 1000).toFixed(2)} s`).join(', ')} ` +
          `[within 5 s: ${met(Math.max(...backs) <= 5000)}]`,
      );
    }
  } finally {
    await runtime.stop();
    await cloud.stop();
    await turn?.stop();
  }
  console.log(`load average at end: ${loadavg()[0].toFixed(1)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
