// npm run bench:runtime — the runtime kernel's speed, from the built program (dist/).
//  1. start to serving for 1 and for 100 fake resources (target: 100 serving within 2 s), with the
//     floor: a process that only starts 100 empty Piscina workers with the same pool settings
//  2. GetReadings p50/p99 over loopback gRPC through the driver's worker, and the same call served
//     in-process as the anchor (platform-server's gRPC server and sensor API in another process, with the
//     driver in its main thread); the difference is the cost of the worker (target: <= 0.2 ms at p50)
//  3. saved config change to the new resource answering (target: <= 1 s)
//  4. resident memory (RSS) at 1, 10, 50 and 100 fake resources, with the per-resource slope, beside
//     the RSS of the same number of empty Piscina workers (the floor) (target: <= 4 MB per resource).
//     BENCH_ONLY=memory runs this part alone.
import 'reflect-metadata';
import { credentials } from '@grpc/grpc-js';
import { spawnServing } from '../../core/serving/testing/spawn-serving.js';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SensorServiceClient, type GetReadingsResponse } from '../../gen/platform/component/sensor/v1/sensor.js';

const MAIN = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('./worker-floor.js', import.meta.url));
const ANCHOR = fileURLToPath(new URL('./in-process-server.js', import.meta.url));
const sensor = (i: number) => ({ name: `s${i}`, api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5, i } } });
const config = (n: number, extra: object[] = []) => ({
  network: { bind_address: 'localhost:0' },
  components: [...Array.from({ length: n }, (_, i) => sensor(i)), ...extra],
});

interface Started {
  address: string;
  pid: number;
  ms: number;
  /** CPU seconds (all threads, user + system) the process used up to its serving line; less load-sensitive than wall time. */
  cpuMs: number;
  stop(): Promise<void>;
  configPath: string;
}

/** Spawns a program and resolves once its stdout matches `ready` (group 1, if any, is the address). */
async function startProgram(args: string[], ready: RegExp): Promise<Omit<Started, 'configPath'>> {
  const t0 = performance.now();
  // Full-time data capture stays on, as by default, but writes into a temporary folder, not ~/.platform.
  const env = { ...process.env, PLATFORM_FTDC_DIR: mkdtempSync(join(tmpdir(), 'bench-ftdc-')) };
  const [script, ...rest] = args;
  const program = await spawnServing(script, rest, { name: script, env, servingLine: ready });
  const ms = performance.now() - t0;
  return {
    address: program.address,
    pid: program.child.pid!,
    ms,
    cpuMs: processCpuMs(program.child.pid!),
    stop: async () => void (await program.stop()),
  };
}

/** Resident set size of a process (Linux /proc), in MB. */
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** RSS once a started program has settled: it serves, then 2 s later (workers' first GCs are done). */
async function settledRss(started: Omit<Started, 'configPath'>): Promise<number> {
  await new Promise((r) => setTimeout(r, 2000));
  return rssMb(started.pid);
}

const COUNTS = [1, 10, 50, 100];

async function memory(): Promise<void> {
  console.log(`\nresident memory (RSS, 2 s after serving / ready), one run each:`);
  const runtime: number[] = [];
  const floor: number[] = [];
  for (const n of COUNTS) {
    const workers = await startProgram([FLOOR, String(n)], /ready/);
    floor.push(await settledRss(workers));
    await workers.stop();
    const server = await startRuntime(n);
    runtime.push(await settledRss(server));
    await server.stop();
    console.log(
      `  ${String(n).padStart(3)} resources: platform-server ${runtime.at(-1)!.toFixed(1)} MB   floor (${n} empty Piscina workers) ${floor.at(-1)!.toFixed(1)} MB`,
    );
  }
  const slope = (values: number[]) => (values.at(-1)! - values[0]) / (COUNTS.at(-1)! - COUNTS[0]);
  console.log(
    `  per-resource slope 1 -> 100: platform-server ${slope(runtime).toFixed(2)} MB/resource, floor ${slope(floor).toFixed(2)} MB/worker, ratio ${(slope(runtime) / slope(floor)).toFixed(2)}x  target <= 4 MB/resource`,
  );
}

async function startRuntime(n: number): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-runtime-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config(n)));
  return { ...(await startProgram([MAIN, '-config', configPath], /platform-server serving on (\S+)/)), configPath };
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

/** Samples `count` sequential calls, in alternating blocks on each client so that both see the same load. */
async function latencies(clients: SensorServiceClient[], name: string, count: number, block = 500): Promise<number[][]> {
  for (const client of clients) for (let i = 0; i < 300; i++) await getReadings(client, name);
  const samples: number[][] = clients.map(() => []);
  for (let done = 0; done < count; done += block) {
    for (const [k, client] of clients.entries()) {
      for (let i = 0; i < block; i++) {
        const t = performance.now();
        await getReadings(client, name);
        samples[k].push(performance.now() - t);
      }
    }
  }
  return samples.map((s) => s.sort((a, b) => a - b));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  console.log(`platform-server runtime benchmark (node ${process.version}, ${runs} runs each where repeated)\n`);

  console.log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (wall times below stretch with it; CPU times much less)\n`,
  );
  if (process.env.BENCH_ONLY === 'memory') {
    await memory();
    process.exit(0);
  }
  const startOne: Started[] = [];
  const startHundred: Started[] = [];
  const floor: Omit<Started, 'configPath'>[] = [];
  for (let r = 0; r < runs; r++) {
    const workers = await startProgram([FLOOR, '100'], /ready/);
    floor.push(workers);
    await workers.stop();
    const one = await startRuntime(1);
    startOne.push(one);
    await one.stop();
    const hundred = await startRuntime(100);
    startHundred.push(hundred);
    await hundred.stop();
  }
  const report = (label: string, runs: Omit<Started, 'configPath'>[], target = '') =>
    console.log(
      `${label} median ${median(runs.map((r) => r.ms)).toFixed(0)} ms wall, ${median(runs.map((r) => r.cpuMs)).toFixed(0)} ms CPU  (wall runs: ${runs.map((r) => r.ms.toFixed(0)).join(', ')})${target}`,
    );
  report('start to serving, 1 resource:   ', startOne);
  report('start to serving, 100 resources:', startHundred, '  target <= 2000 ms wall');
  report('floor, 100 empty Piscina workers:', floor);
  console.log(
    `  100 resources / floor: ${(median(startHundred.map((r) => r.ms)) / median(floor.map((r) => r.ms))).toFixed(2)}x wall, ${(median(startHundred.map((r) => r.cpuMs)) / median(floor.map((r) => r.cpuMs))).toFixed(2)}x CPU`,
  );

  const runtime = await startRuntime(1);
  const anchor = await startProgram([ANCHOR], /serving on (\S+)/);
  const [viaWorker, inProcess] = await latencies(
    [runtime.address, anchor.address].map((a) => new SensorServiceClient(a, credentials.createInsecure())),
    's0',
    5000,
  );
  await anchor.stop();
  const added = pct(viaWorker, 0.5) - pct(inProcess, 0.5);
  console.log(`\nGetReadings over loopback gRPC (5000 calls each after 300 warm-up, in alternating blocks of 500):`);
  console.log(`  through the driver's worker: p50 ${pct(viaWorker, 0.5).toFixed(3)} ms  p99 ${pct(viaWorker, 0.99).toFixed(3)} ms`);
  console.log(`  served in-process (anchor):  p50 ${pct(inProcess, 0.5).toFixed(3)} ms  p99 ${pct(inProcess, 0.99).toFixed(3)} ms`);
  console.log(
    `  ratio worker/in-process at p50: ${(pct(viaWorker, 0.5) / pct(inProcess, 0.5)).toFixed(2)}x; the worker adds ${added.toFixed(3)} ms at p50 (target <= 0.2 ms)`,
  );

  const client = new SensorServiceClient(runtime.address, credentials.createInsecure());
  const reconfig: number[] = [];
  for (let r = 0; r < Math.max(runs, 5); r++) {
    const name = `added${r}`;
    const temp = `${runtime.configPath}.tmp`;
    writeFileSync(
      temp,
      JSON.stringify({
        ...config(
          1,
          Array.from({ length: r + 1 }, (_, k) => ({ ...sensor(1000 + k), name: `added${k}` })),
        ),
        network: { bind_address: 'localhost:0' },
      }),
    );
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
  console.log(
    `\nsaved config change to the new resource answering: median ${median(reconfig).toFixed(0)} ms (runs: ${reconfig.map((v) => v.toFixed(0)).join(', ')})  target <= 1000 ms`,
  );
  await runtime.stop();
  await memory();
  process.exit(0);
}

await main();
