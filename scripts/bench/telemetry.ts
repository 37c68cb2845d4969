// npm run bench:telemetry — what telemetry costs, with it off and on in the same run (target: <= 5 %).
//
//   GetReadings  p50 of GetReadings over loopback gRPC (through the sensor's driver worker) on two
//                platform-server processes started from dist/: one without telemetry, one with the
//                machine config's tracing sending every span to an OTLP/HTTP receiver (and metrics kept,
//                as always). Calls alternate between the two in batches, so that both see the same load.
//   ingest       tabular points/s through DataCaptureUpload (batches of BATCH points, 2 uploads in
//                flight) on two platform-cloud processes: one without, one with --otlp-endpoint.
//                Rounds alternate off/on.
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
import { spawnServing, type ServingProgram } from '../../core/shared/testing/spawn-serving.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../core/shared/telemetry/testing/otlp-receiver.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const CALL_BATCH = 200;
const POINTS = Number(process.env.BENCH_POINTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SERVER = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (on: number, off: number) => `${(((on - off) / off) * 100).toFixed(1)} %`;

async function startServer(receiver: OtlpReceiver | undefined): Promise<ServingProgram> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-telemetry-'));
  const config = {
    network: { bind_address: 'localhost:0' },
    components: [{ name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5 } } }],
    ...(receiver ? { tracing: { enabled: true, otlp_endpoint: receiver.url } } : {}),
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return spawnServing(SERVER, ['-config', join(dir, 'config.json')], {
    name: 'platform-server',
    env: { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'ftdc') },
    servingLine: /platform-server serving on (\S+)/,
  });
}

async function scrape(output: string, program: string): Promise<void> {
  const url = new RegExp(`${program} web page on (http://\\S+)`).exec(output)?.[1];
  if (url) await (await fetch(new URL('/metrics', url))).text();
}

async function readingsBench(receiver: OtlpReceiver): Promise<{ off: number; on: number }> {
  const [off, on] = [await startServer(undefined), await startServer(receiver)];
  try {
    const clients = [off, on].map((p) => new SensorServiceClient(p.address, credentials.createInsecure()));
    const times: number[][] = [[], []];
    const one = (c: SensorServiceClient) =>
      new Promise<void>((resolve, reject) => c.getReadings({ name: 's', extra: undefined }, (err) => (err ? reject(err) : resolve())));
    for (const c of clients) for (let i = 0; i < 200; i++) await one(c); // warm up
    for (let done = 0; done < CALLS; done += CALL_BATCH) {
      for (const [i, c] of clients.entries()) {
        for (let k = 0; k < CALL_BATCH; k++) {
          const start = process.hrtime.bigint();
          await one(c);
          times[i].push(ms(start));
        }
      }
    }
    await scrape(off.output(), 'platform-server');
    await scrape(on.output(), 'platform-server');
    clients.forEach((c) => c.close());
    return { off: median(times[0]), on: median(times[1]) };
  } finally {
    await off.stop();
    await on.stop();
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
    console.log('| measure | telemetry off | telemetry on | on vs. off |');
    console.log('| --- | --- | --- | --- |');
    console.log(`| GetReadings p50 (ms) | ${readings.off.toFixed(3)} | ${readings.on.toFixed(3)} | ${pct(readings.on, readings.off)} slower |`);
    console.log(`| cloud ingest (points/s) | ${ingested.off.toFixed(0)} | ${ingested.on.toFixed(0)} | ${pct(ingested.off, ingested.on)} slower |`);
    console.log('');
    console.log(`spans received: ${server} from platform-server, ${cloud} from platform-cloud (target: on <= 5 % slower)`);
  } finally {
    await receiver.close();
  }
}

await run();
process.exit(0);
