// npm run bench:runtime — the runtime kernel's speed, from the built program (dist/).
//  1. start to serving for 1 and for 100 fake resources (target: 100 serving within 2 s)
//  2. GetReadings p50/p99 over loopback gRPC through the driver's worker, and the same call served
//     in-process as the anchor; the difference is the cost of the worker (target: <= 0.2 ms at p50)
//  3. saved config change to the new resource answering (target: <= 1 s)
import 'reflect-metadata';
import { Server, ServerCredentials, credentials } from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SensorServiceClient, SensorServiceService, type GetReadingsResponse } from '../../gen/platform/component/sensor/v1/sensor.js';
import fakeSensor from '../../drivers/sensor/fake/driver.js';
import type { Sensor } from '../../plugins/apis/sensor.js';

const MAIN = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const sensor = (i: number) => ({ name: `s${i}`, api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5, i } } });
const config = (n: number, extra: object[] = []) => ({ network: { bind_address: 'localhost:0' }, components: [...Array.from({ length: n }, (_, i) => sensor(i)), ...extra] });

interface Started {
  address: string;
  ms: number;
  /** CPU seconds (all threads, user + system) the process used up to its serving line; less load-sensitive than wall time. */
  cpuMs: number;
  stop(): Promise<void>;
  configPath: string;
}

async function startRuntime(n: number): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-runtime-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config(n)));
  const t0 = performance.now();
  const child = spawn(process.execPath, [MAIN, '-config', configPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const match = /platform-server serving on (\S+)/.exec(text);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`platform-server exited ${code}`)));
  });
  const ms = performance.now() - t0;
  return {
    address,
    ms,
    cpuMs: processCpuMs(child.pid!),
    configPath,
    stop: () => new Promise((resolve) => { child.once('exit', () => resolve()); child.kill('SIGTERM'); }),
  };
}

/** utime + stime of a process from /proc (Linux), in milliseconds. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

function getReadings(client: SensorServiceClient, name: string): Promise<GetReadingsResponse> {
  return new Promise((resolve, reject) => client.getReadings({ name }, (err, res) => (err ? reject(err) : resolve(res))));
}

async function latencies(client: SensorServiceClient, name: string, count: number): Promise<number[]> {
  for (let i = 0; i < 300; i++) await getReadings(client, name);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await getReadings(client, name);
    samples.push(performance.now() - t);
  }
  return samples.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The anchor: the same driver and the same gRPC service, but the driver runs in the server's own thread. */
async function inProcessServer(): Promise<{ address: string; stop(): void }> {
  const driver = (await fakeSensor({ name: 's0', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5, i: 0 }, count_calls: false }, dependencies: { get: () => { throw new Error('none'); }, names: () => [] }, logger: { debug() {}, info() {}, warn() {}, error() {} } })) as Sensor;
  const server = new Server();
  server.addService(SensorServiceService, {
    getReadings: (call: { request: { name: string } }, cb: (e: null, r: GetReadingsResponse) => void) => {
      void Promise.resolve(driver.getReadings()).then((readings) => cb(null, { readings }));
    },
    doCommand: () => undefined,
  } as never);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('localhost:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { address: `localhost:${port}`, stop: () => server.forceShutdown() };
}

async function main(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  console.log(`platform-server runtime benchmark (node ${process.version}, ${runs} runs each where repeated)\n`);

  console.log(`load average before: ${loadavg().map((l) => l.toFixed(1)).join(' ')} (wall times below stretch with it; CPU times much less)\n`);
  const startOne: Started[] = [];
  const startHundred: Started[] = [];
  for (let r = 0; r < runs; r++) {
    const one = await startRuntime(1);
    startOne.push(one);
    await one.stop();
    const hundred = await startRuntime(100);
    startHundred.push(hundred);
    await hundred.stop();
  }
  const report = (label: string, runs: Started[], target = '') =>
    console.log(`${label} median ${median(runs.map((r) => r.ms)).toFixed(0)} ms wall, ${median(runs.map((r) => r.cpuMs)).toFixed(0)} ms CPU  (wall runs: ${runs.map((r) => r.ms.toFixed(0)).join(', ')})${target}`);
  report('start to serving, 1 resource:   ', startOne);
  report('start to serving, 100 resources:', startHundred, '  target <= 2000 ms wall');

  const runtime = await startRuntime(1);
  const viaWorker = await latencies(new SensorServiceClient(runtime.address, credentials.createInsecure()), 's0', 5000);
  const anchor = await inProcessServer();
  const inProcess = await latencies(new SensorServiceClient(anchor.address, credentials.createInsecure()), 's0', 5000);
  anchor.stop();
  const added = pct(viaWorker, 0.5) - pct(inProcess, 0.5);
  console.log(`\nGetReadings over loopback gRPC (5000 calls after 300 warm-up):`);
  console.log(`  through the driver's worker: p50 ${pct(viaWorker, 0.5).toFixed(3)} ms  p99 ${pct(viaWorker, 0.99).toFixed(3)} ms`);
  console.log(`  served in-process (anchor):  p50 ${pct(inProcess, 0.5).toFixed(3)} ms  p99 ${pct(inProcess, 0.99).toFixed(3)} ms`);
  console.log(`  ratio worker/in-process at p50: ${(pct(viaWorker, 0.5) / pct(inProcess, 0.5)).toFixed(2)}x; the worker adds ${added.toFixed(3)} ms at p50 (target <= 0.2 ms)`);

  const client = new SensorServiceClient(runtime.address, credentials.createInsecure());
  const reconfig: number[] = [];
  for (let r = 0; r < Math.max(runs, 5); r++) {
    const name = `added${r}`;
    const temp = `${runtime.configPath}.tmp`;
    writeFileSync(temp, JSON.stringify({ ...config(1, Array.from({ length: r + 1 }, (_, k) => ({ ...sensor(1000 + k), name: `added${k}` }))), network: { bind_address: 'localhost:0' } }));
    const t0 = performance.now();
    renameSync(temp, runtime.configPath);
    for (;;) {
      try {
        await getReadings(client, name);
        break;
      } catch {
        await new Promise((res) => setTimeout(res, 2));
      }
    }
    reconfig.push(performance.now() - t0);
  }
  console.log(`\nsaved config change to the new resource answering: median ${median(reconfig).toFixed(0)} ms (runs: ${reconfig.map((v) => v.toFixed(0)).join(', ')})  target <= 1000 ms`);
  await runtime.stop();
  process.exit(0);
}

await main();
