// npm run bench:telemetry — what telemetry costs, with it off and on in the same run (target: <= 5 %).
//
//   GetReadings  p50 of GetReadings over loopback gRPC (through the sensor's driver worker) on three
//                platform-server processes started from dist/: one without tracing, one with the machine
//                config's tracing recording every call (sample_ratio 1, the default) and sending every
//                span to an OTLP/HTTP receiver, and one recording a share of the calls (sample_ratio
//                BENCH_SAMPLE_RATIO); metrics are kept in all three, as always. Calls rotate between the
//                three in batches, so that all see the same load.
//   ingest       tabular points/s through DataCaptureUpload (batches of BATCH points, 2 uploads in
//                flight) on two platform-cloud processes: one without, one with --otlp-endpoint (every
//                call recorded). Rounds alternate off/on.
//
// Each figure is printed with its ratio to the figure without tracing (on / off).
//
// The receiver (in this process) takes the spans and counts them; /metrics is scraped once per round, as
// Prometheus would, so that the process metrics are live too.
import { credentials } from '@grpc/grpc-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient, type CloudClient } from '../../cloud/client/cloud-client.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../core/serving/telemetry/testing/otlp-receiver.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const CALL_BATCH = 200;
const POINTS = Number(process.env.BENCH_POINTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLE_RATIO = Number(process.env.BENCH_SAMPLE_RATIO ?? 0.1);
/** Profiling: each program started with --cpu-prof, its profile written into this folder at its stop. */
const PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const nodeFlags = PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROF_DIR] : [];
const SERVER = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ratio = (on: number, off: number) => (on / off).toFixed(3);

async function startServer(receiver: OtlpReceiver | undefined, sampleRatio = 1): Promise<ServingProgram> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-telemetry-'));
  const config = {
    network: { bind_address: 'localhost:0' },
    components: [{ name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5 } } }],
    ...(receiver ? { tracing: { enabled: true, otlp_endpoint: receiver.url, sample_ratio: sampleRatio } } : {}),
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return spawnServing(SERVER, ['-config', join(dir, 'config.json')], {
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

interface Readings {
  /** p50 of each server's calls, ms: off, on, sampled. */
  p50: number[];
  /** Each server process's CPU time per call, microseconds (the driver worker's included). */
  cpu: number[];
}

async function readingsBench(receiver: OtlpReceiver): Promise<Readings> {
  const servers = [await startServer(undefined), await startServer(receiver), await startServer(receiver, SAMPLE_RATIO)];
  try {
    const clients = servers.map((p) => new SensorServiceClient(p.address, credentials.createInsecure()));
    const times: number[][] = clients.map(() => []);
    const one = (c: SensorServiceClient) =>
      new Promise<void>((resolve, reject) => c.getReadings({ name: 's', extra: undefined }, (err) => (err ? reject(err) : resolve())));
    for (const c of clients) for (let i = 0; i < 200; i++) await one(c); // warm up
    const cpuBefore: number[] = [];
    for (const server of servers) cpuBefore.push(await scrape(server.output(), 'platform-server'));
    for (let done = 0; done < CALLS; done += CALL_BATCH) {
      for (const [i, c] of clients.entries()) {
        for (let k = 0; k < CALL_BATCH; k++) {
          const start = process.hrtime.bigint();
          await one(c);
          times[i].push(ms(start));
        }
      }
    }
    const cpu: number[] = [];
    for (const [i, server] of servers.entries()) cpu.push((((await scrape(server.output(), 'platform-server')) - cpuBefore[i]) * 1e6) / times[i].length);
    clients.forEach((c) => c.close());
    return { p50: times.map(median), cpu };
  } finally {
    for (const server of servers) await server.stop();
  }
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

async function ingestBench(receiver: OtlpReceiver): Promise<{ off: number; on: number }> {
  const [off, on] = [await startCloud(undefined), await startCloud(receiver)];
  try {
    const rates: number[][] = [[], []];
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, cloud] of [off, on].entries()) {
        rates[i].push(await ingest(cloud));
        await scrape(cloud.program.output(), 'platform-cloud');
      }
    }
    return { off: median(rates[0]), on: median(rates[1]) };
  } finally {
    for (const cloud of [off, on]) {
      cloud.client.close();
      await cloud.program.stop();
      rmSync(cloud.dir, { recursive: true, force: true });
    }
  }
}

async function run(): Promise<void> {
  console.log(`bench:telemetry  calls=${CALLS} points=${POINTS} batch=${BATCH} rounds=${ROUNDS}`);
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at start`,
  );
  const receiver = await startOtlpReceiver();
  try {
    const readings = await readingsBench(receiver);
    const server = receiver.spans.filter((s) => s.service === 'platform-server').length;
    const ingested = await ingestBench(receiver);
    const cloud = receiver.spans.filter((s) => s.service === 'platform-cloud').length;
    console.log('');
    console.log('| measure | tracing off | tracing on | on / off |');
    console.log('| --- | --- | --- | --- |');
    const [off, on, sampled] = readings.p50;
    const [cpuOff, cpuOn, cpuSampled] = readings.cpu;
    console.log(`| GetReadings p50 (ms), every call traced | ${off.toFixed(3)} | ${on.toFixed(3)} | ${ratio(on, off)} |`);
    console.log(`| GetReadings p50 (ms), sample_ratio ${SAMPLE_RATIO} | ${off.toFixed(3)} | ${sampled.toFixed(3)} | ${ratio(sampled, off)} |`);
    console.log(`| platform-server CPU per GetReadings (µs), every call traced | ${cpuOff.toFixed(0)} | ${cpuOn.toFixed(0)} | ${ratio(cpuOn, cpuOff)} |`);
    console.log(
      `| platform-server CPU per GetReadings (µs), sample_ratio ${SAMPLE_RATIO} | ${cpuOff.toFixed(0)} | ${cpuSampled.toFixed(0)} | ${ratio(cpuSampled, cpuOff)} |`,
    );
    console.log(
      `| cloud ingest (points/s), every call traced | ${ingested.off.toFixed(0)} | ${ingested.on.toFixed(0)} | ${ratio(ingested.on, ingested.off)} |`,
    );
    console.log('');
    console.log(`spans received: ${server} from platform-server, ${cloud} from platform-cloud`);
    console.log('target: GetReadings at most 5 % slower (ratio <= 1.050), ingest at most 5 % lower (ratio >= 0.952)');
  } finally {
    await receiver.close();
  }
}

await run();
process.exit(0);
