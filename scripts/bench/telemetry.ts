// npm run bench:telemetry — what telemetry costs, with it off and on in the same run (target: <= 5 %).
//
//   GetReadings  p50 of GetReadings over loopback gRPC (through the sensor's driver worker) on three
//                platform-server processes started from dist/: one without tracing, one with the machine
//                config's tracing recording every call (sample_ratio 1, the default) and sending every
//                span to an OTLP/HTTP receiver, and one recording a share of the calls (sample_ratio
//                BENCH_SAMPLE_RATIO); with BENCH_BASELINE_DIST=<another build's dist/>, a fourth: that
//                build's platform-server with every call traced (before/after in one run); with
//                BENCH_CONTROL=1 a second server without tracing (its ratio is the noise). Metrics are
//                kept in all, as always. Calls rotate between the servers in batches (in a new random
//                order each round), so that all see the same load; the whole is repeated BENCH_REPEATS
//                times, each time on new processes (started in a random order): two processes of the
//                same program differed by up to 10 % here.
//                Besides p50: each server's main-thread CPU per call (Linux schedstat, ns, read around
//                each of its batches; robust to a loaded machine, where wall time is not) and its process
//                CPU per call (/metrics' process_cpu_seconds_total, the driver worker included). Each
//                ratio to tracing off is the median over the repeats of the repeat's ratio.
//   ingest       tabular points/s through DataCaptureUpload (batches of BATCH points, 2 uploads in
//                flight) on two platform-cloud processes: one without, one with --otlp-endpoint (every
//                call recorded). Rounds alternate off/on; also the median of the rounds' ratios.
//                BENCH_POINTS=0 leaves it out, BENCH_REPEATS=0 leaves GetReadings out.
//
// The receiver (in this process) takes the spans and counts them; /metrics is scraped once per round, as
// Prometheus would, so that the process metrics are live too. The load average is printed with each repeat.
import { credentials } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient, type CloudClient } from '../../cloud/client/cloud-client.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../core/serving/telemetry/testing/otlp-receiver.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
/** Calls to each server before the measured ones, so that the JIT has settled. */
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 1000);
/** Calls to one server before the next one's turn: small, so that all see the same moments of a shared machine's load. */
const CALL_BATCH = Number(process.env.BENCH_CALL_BATCH ?? 50);
const POINTS = Number(process.env.BENCH_POINTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLE_RATIO = Number(process.env.BENCH_SAMPLE_RATIO ?? 0.1);
/** Times the GetReadings measurement is repeated, each time on new processes; each figure is the median over the repeats. */
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** Another build's dist/ folder: a fourth server, its platform-server with every call traced (before/after). */
const BASELINE_DIST = process.env.BENCH_BASELINE_DIST;
/** BENCH_CONTROL=1: a second server without tracing, whose ratio to the first shows the bench's own noise. */
const CONTROL = process.env.BENCH_CONTROL === '1';
/** Profiling: each program started with --cpu-prof, its profile written into this folder at its stop. */
const PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const nodeFlags = PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROF_DIR] : [];
const SERVER = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (on: number, off: number) => (on / off).toFixed(3);

async function startServer(receiver: OtlpReceiver | undefined, sampleRatio = 1, script = SERVER): Promise<ServingProgram> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-telemetry-'));
  const config = {
    network: { bind_address: 'localhost:0' },
    components: [{ name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5 } } }],
    ...(receiver ? { tracing: { enabled: true, otlp_endpoint: receiver.url, sample_ratio: sampleRatio } } : {}),
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return spawnServing(script, ['-config', join(dir, 'config.json')], {
    name: 'platform-server',
    nodeFlags,
    env: { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'ftdc') },
    servingLine: /platform-server serving on (\S+)/,
  });
}

/** Scrapes /metrics as Prometheus would; returns the process's CPU seconds so far (user + system). */
async function scrape(output: string, program: string): Promise<number> {
  const url = new RegExp(`${program} web page on (http://\\S+)`).exec(output)?.[1];
  if (!url) throw new Error(`${program} printed no web page address`);
  const text = await (await fetch(new URL('/metrics', url))).text();
  return Number(/^process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN);
}

/**
 * The CPU time of a process's main thread so far, ns (Linux's schedstat: nanosecond resolution, unlike
 * the 10 ms ticks of /proc/<pid>/stat). The gRPC handling, the tracing and the context work all run there;
 * the driver's own work runs in its worker and is left out.
 */
function mainThreadNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface ServerUnderTest {
  label: string;
  program: ServingProgram;
  client: SensorServiceClient;
}

/** One repeat's figures per server: p50 (ms), process CPU per call and main-thread CPU per call (µs). */
interface Repeat {
  p50: number[];
  cpu: number[];
  main: number[];
  load: string;
}

function shuffled<T>(xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

async function readingsRepeat(servers: ServerUnderTest[]): Promise<Repeat> {
  const one = (c: SensorServiceClient) =>
    new Promise<void>((resolve, reject) => c.getReadings({ name: 's', extra: undefined }, (err) => (err ? reject(err) : resolve())));
  const times: number[][] = servers.map(() => []);
  const mainNs = servers.map(() => 0);
  const loadBefore = load();
  const cpuBefore: number[] = [];
  for (const { program } of servers) cpuBefore.push(await scrape(program.output(), 'platform-server'));
  for (let done = 0; done < CALLS; done += CALL_BATCH) {
    // A new order each round: no server always runs right after the same other one.
    for (const i of shuffled(servers.map((_, k) => k))) {
      const { program, client } = servers[i];
      // The main thread's CPU around this server's batch only: the other servers' batches (when this
      // one idles) are left out.
      const before = mainThreadNs(program.child.pid!);
      for (let k = 0; k < CALL_BATCH; k++) {
        const start = process.hrtime.bigint();
        await one(client);
        times[i].push(ms(start));
      }
      mainNs[i] += mainThreadNs(program.child.pid!) - before;
    }
  }
  const cpu: number[] = [];
  for (const [i, { program }] of servers.entries()) cpu.push((((await scrape(program.output(), 'platform-server')) - cpuBefore[i]) * 1e6) / times[i].length);
  return { p50: times.map(median), cpu, main: mainNs.map((ns, i) => ns / 1000 / times[i].length), load: `${loadBefore} -> ${load()}` };
}

/** Each repeat on new processes: two processes of the very same program differ by up to 10 % here (JIT, memory, cores). */
async function startServers(specs: [string, () => Promise<ServingProgram>][]): Promise<ServerUnderTest[]> {
  const servers: ServerUnderTest[] = [];
  try {
    for (const k of shuffled(specs.map((_, i) => i))) {
      const [label, start] = specs[k];
      const program = await start();
      servers[k] = { label, program, client: new SensorServiceClient(program.address, credentials.createInsecure()) };
    }
  } catch (err) {
    await stopServers(servers);
    throw err;
  }
  return servers;
}

async function stopServers(servers: (ServerUnderTest | undefined)[]): Promise<void> {
  for (const server of servers) {
    server?.client.close();
    await server?.program.stop();
  }
}

async function readingsBench(receiver: OtlpReceiver): Promise<{ labels: string[]; repeats: Repeat[] }> {
  const specs: [string, () => Promise<ServingProgram>][] = [
    ['tracing off', () => startServer(undefined)],
    ['every call traced', () => startServer(receiver)],
    [`sample_ratio ${SAMPLE_RATIO}`, () => startServer(receiver, SAMPLE_RATIO)],
  ];
  if (CONTROL) specs.push(['tracing off (control)', () => startServer(undefined)]);
  if (BASELINE_DIST) specs.push([`every call traced, ${BASELINE_DIST}`, () => startServer(receiver, 1, join(BASELINE_DIST, 'core/server/main.js'))]);
  const repeats: Repeat[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const servers = await startServers(specs);
    try {
      for (const { client } of servers) {
        for (let i = 0; i < WARM_UP; i++) {
          await new Promise<void>((resolve, reject) => client.getReadings({ name: 's', extra: undefined }, (err) => (err ? reject(err) : resolve())));
        }
      }
      const repeat = await readingsRepeat(servers);
      repeats.push(repeat);
      const cells = servers.slice(1).map((_, j) => `${ratio(repeat.p50[j + 1], repeat.p50[0])}/${ratio(repeat.main[j + 1], repeat.main[0])}`);
      console.log(`repeat ${r + 1}: p50/main-thread ratios ${cells.join('  ')}  (load ${repeat.load})`);
    } finally {
      await stopServers(servers);
    }
  }
  return { labels: specs.map(([label]) => label), repeats };
}

interface Cloud {
  program: ServingProgram;
  client: CloudClient;
  part: string;
  dir: string;
}

async function startCloud(receiver: OtlpReceiver | undefined): Promise<Cloud> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-telemetry-cloud-'));
  const program = await spawnServing(CLOUD, ['serve', '--data-dir', dir, '--port', '0', '--web-port', '0'], {
    name: 'platform-cloud',
    nodeFlags,
    env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver?.url ?? '' },
  });
  const admin = async <T>(action: string, args: Record<string, unknown>) => (await callAdminChannel(dir, action, args))!.result as T;
  const org = (await admin<{ id: string }>('org.create', { name: 'bench' })).id;
  const machine = await admin<{ part_id: string }>('machine.create', { org, name: 'robot' });
  const key = await admin<{ id: string; key: string }>('key.create', { org, role: 'owner' });
  const client = createCloudClient({ serviceHost: program.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  return { program, client, part: machine.part_id, dir };
}

let batchNo = 0;
async function ingest(cloud: Cloud): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  const worker = async () => {
    for (let b = next++; b < POINTS / BATCH; b = next++) {
      const base = batchNo++ * BATCH;
      const data = Array.from({ length: BATCH }, (_, i) => ({ readings: { temperature: 20 + ((base + i) % 100) / 10 } }));
      const times = data.map((_, i) => {
        const t = new Date(Date.UTC(2026, 0, 1) + (base + i) * 2);
        return [t, new Date(t.getTime() + 1)] as [Date, Date];
      });
      await cloud.client.dataClient.tabularDataCaptureUpload(data, cloud.part, 'rdk:component:sensor', 'thermo', 'Readings', times);
    }
  };
  await Promise.all([worker(), worker()]);
  return POINTS / (ms(start) / 1000);
}

async function ingestBench(receiver: OtlpReceiver): Promise<{ off: number; on: number; ratio: number }> {
  const [off, on] = [await startCloud(undefined), await startCloud(receiver)];
  try {
    const rates: number[][] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, cloud] of [off, on].entries()) {
        rates[i].push(await ingest(cloud));
        await scrape(cloud.program.output(), 'platform-cloud');
      }
    }
    // Each round's on / off (the two measured back to back), then their median.
    return { off: median(rates[0]), on: median(rates[1]), ratio: median(rates[1].map((on, r) => on / rates[0][r])) };
  } finally {
    for (const cloud of [off, on]) {
      cloud.client.close();
      await cloud.program.stop();
      rmSync(cloud.dir, { recursive: true, force: true });
    }
  }
}

/** The GetReadings table: per server, the medians over the repeats and the medians of the repeats' ratios. */
function printReadings(readings: { labels: string[]; repeats: Repeat[] }): void {
  console.log('| measure | ' + readings.labels.join(' | ') + ' |');
  console.log('| --- |' + readings.labels.map(() => ' --- |').join(''));
  const row = (name: string, pick: (r: Repeat) => number[], digits: number) => {
    const medians = readings.labels.map((_, i) => median(readings.repeats.map((r) => pick(r)[i])));
    console.log(`| ${name} | ${medians.map((m) => m.toFixed(digits)).join(' | ')} |`);
    // The median over the repeats of each repeat's ratio to tracing off (same load within a repeat).
    const ratios = readings.labels.slice(1).map((_, j) => median(readings.repeats.map((r) => pick(r)[j + 1] / pick(r)[0])));
    console.log(`| ${name}, on / off (median of ${readings.repeats.length} ratios) | 1 | ${ratios.map((x) => x.toFixed(3)).join(' | ')} |`);
  };
  row('GetReadings p50 (ms)', (r) => r.p50, 3);
  row('main thread CPU per GetReadings (µs)', (r) => r.main, 0);
  row('process CPU per GetReadings (µs, workers included)', (r) => r.cpu, 0);
}

async function run(): Promise<void> {
  console.log(`bench:telemetry  calls=${CALLS} repeats=${REPEATS} points=${POINTS} batch=${BATCH} rounds=${ROUNDS}`);
  console.log(`machine: ${cpus().length} cores, load average ${load()} at start`);
  const receiver = await startOtlpReceiver();
  try {
    const readings = REPEATS > 0 ? await readingsBench(receiver) : { labels: [], repeats: [] };
    const server = receiver.spans.filter((s) => s.service === 'platform-server').length;
    const ingested = POINTS > 0 ? await ingestBench(receiver) : undefined;
    const cloud = receiver.spans.filter((s) => s.service === 'platform-cloud').length;
    console.log('');
    if (readings.repeats.length > 0) printReadings(readings);
    if (ingested) {
      console.log('');
      console.log(`| cloud ingest (points/s) | without --otlp-endpoint | with | on / off |`);
      console.log('| --- | --- | --- | --- |');
      console.log(`| median of ${ROUNDS} rounds | ${ingested.off.toFixed(0)} | ${ingested.on.toFixed(0)} | ${ratio(ingested.on, ingested.off)} |`);
      console.log(`| median of the ${ROUNDS} rounds' on / off | | | ${ingested.ratio.toFixed(3)} |`);
    }
    console.log(`load average at the end: ${load()}`);
    console.log('');
    console.log(`spans received: ${server} from platform-server, ${cloud} from platform-cloud`);
    console.log('target: GetReadings at most 5 % slower (ratio <= 1.050), ingest at most 5 % lower (ratio >= 0.952)');
  } finally {
    await receiver.close();
  }
}

await run();
process.exit(0);
