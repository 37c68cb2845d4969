// npm run bench:capture — the data manager's capture and sync, from the built programs (dist/).
//
//   capture    the highest sustained capture rate (readings/s across fake sensors captured by the data
//              manager inside platform-server) and the runtime's CPU spent on capture at each rate (the
//              process' CPU minus that of the same machine without capture). Target: 5,000 readings/s
//              with at most 25 % of one core. Anchor: the same records (SensorData encoding, framing,
//              checksum) appended to a plain file with one fsync per batch of 100, in this process.
//              Second anchor, the floor of any design that takes each reading in its resource's own worker:
//              SENSORS bare worker threads, each waking on a drift-corrected timer at its share of 5,000/s
//              and doing nothing else, in this process.
//   jitter     lateness of a 20 Hz capture against its schedule (p50/p99) and its achieved frequency, at
//              rest and while the machine captures 5,000 readings/s. Anchor: a bare worker ticking at 20 Hz on
//              a plain timer beside the floor's threads (the jitter floor at that wake-up load).
//   latency    GetReadings p50/p99 of a sensor that is not captured, over gRPC, without capture and while
//              the machine captures (capture must not change the latency of other calls).
//   sync       points/s from closed capture files into platform-cloud (Syncer with 4 threads, the part's
//              credentials, upload ids, delete after ack). Target >= 40,000. Anchor: the cloud's raw
//              ingest of the same requests (same bodies, no upload id, no files), same concurrency.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { credentials } from '@grpc/grpc-js';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { CaptureFileWriter, frame, readCaptureFile, type CaptureFileHeader } from '../../core/datamanager/capture-file.js';
import { connectPartCloud } from '../../core/datamanager/part-cloud.js';
import { closedCaptureFiles, Syncer } from '../../core/datamanager/sync.js';
import { uploadRequests } from '../../core/datamanager/upload-body.js';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';

const RUNTIME = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const SENSORS = Number(process.env.BENCH_SENSORS ?? 10);
const RATES = (process.env.BENCH_RATES ?? '1000,2500,5000,7500,10000').split(',').map(Number);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 10_000);
const SYNC_POINTS = Number(process.env.BENCH_SYNC_POINTS ?? 300_000);
const READINGS = { temperature_c: 21.5, humidity_pct: 40.2, pressure_hpa: 1013.2 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function startProgram(args: string[], ready: RegExp): Promise<{ child: ChildProcess; address: string; stop(): Promise<void> }> {
  const env = { ...process.env, PLATFORM_FTDC_DIR: mkdtempSync(join(tmpdir(), 'bench-ftdc-')) };
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = ready.exec(text);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${text.slice(-2000)}`)));
  });
  return {
    child,
    address,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface CaptureRun {
  target: number;
  achieved: number;
  cpuPct: number;
  skipped: number;
  jitter: { p50: number; p99: number; hz: number };
  latency: { p50: number; p99: number };
}

type Status = { capture: Record<string, { records: number; skipped: number; lateness_p50_ms: number; lateness_p99_ms: number }> };

function dmStatus(client: DataManagerServiceClient): Promise<Status> {
  return new Promise((resolve, reject) =>
    client.doCommand({ name: 'dm', command: { status: {} } }, (err, res) => (err ? reject(err) : resolve(res.result!.status as Status))),
  );
}

/** Runs SENSORS sensors captured at `rate` readings/s in total (0: not captured) plus one at 20 Hz. */
/** GetReadings latencies (ms) of the uncaptured `probe` sensor: 1000 sequential calls after 200 warm-up. */
async function probeLatency(address: string): Promise<CaptureRun['latency']> {
  const client = new SensorServiceClient(address, credentials.createInsecure());
  const once = () => new Promise<void>((resolve, reject) => client.getReadings({ name: 'probe' }, (err) => (err ? reject(err) : resolve())));
  for (let i = 0; i < 200; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t0 = performance.now();
    await once();
    samples.push(performance.now() - t0);
  }
  client.close();
  samples.sort((a, b) => a - b);
  return { p50: samples[500], p99: samples[990] };
}

async function captureRun(
  rate: number,
): Promise<{ cpuMs: number; wallMs: number; records: number; skipped: number; jitter: CaptureRun['jitter']; latency: CaptureRun['latency'] }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-capture-'));
  const sensor = (name: string, hz: number) => ({
    name,
    api: 'core:component:sensor',
    model: 'fake',
    attributes: { readings: READINGS },
    ...(hz > 0 ? { service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: hz }] } }] } : {}),
  });
  const config = {
    network: { bind_address: 'localhost:0' },
    components: [...Array.from({ length: SENSORS }, (_, i) => sensor(`s${i}`, rate / SENSORS)), sensor('jitter20', 20), sensor('probe', 0)],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: join(dir, 'capture'), sync_disabled: true, sync_interval_mins: 1 },
      },
    ],
  };
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const runtime = await startProgram([RUNTIME, '-config', join(dir, 'config.json')], /platform-server serving on (\S+)/);
  const client = new DataManagerServiceClient(runtime.address, credentials.createInsecure());
  try {
    await sleep(3000); // warm-up
    const total = (s: Status, key: 'records' | 'skipped') =>
      Object.entries(s.capture)
        .filter(([k]) => !k.startsWith('jitter20'))
        .reduce((sum, [, c]) => sum + c[key], 0);
    const s0 = await dmStatus(client);
    const cpu0 = processCpuMs(runtime.child.pid!);
    const t0 = performance.now();
    await sleep(WINDOW_MS);
    const s1 = await dmStatus(client);
    const cpu1 = processCpuMs(runtime.child.pid!);
    const wallMs = performance.now() - t0;
    const j = s1.capture['jitter20/Readings'];
    const jitterHz = ((j.records - s0.capture['jitter20/Readings'].records) * 1000) / wallMs;
    // After the CPU window, so that the probe's calls are not counted as capture CPU.
    const latency = await probeLatency(runtime.address);
    return {
      latency,
      cpuMs: cpu1 - cpu0,
      wallMs,
      records: total(s1, 'records') - total(s0, 'records'),
      skipped: total(s1, 'skipped') - total(s0, 'skipped'),
      jitter: { p50: j.lateness_p50_ms, p99: j.lateness_p99_ms, hz: jitterHz },
    };
  } finally {
    client.close();
    await runtime.stop();
  }
}

function encodeRecord(): Uint8Array {
  const now = new Date();
  return SensorData.encode({ metadata: { timeRequested: now, timeReceived: now, mimeType: '' }, struct: { readings: READINGS } }).finish();
}

/** The anchor: encode, frame and append records to a plain file, one fsync per batch of 100. */
function plainAppend(n: number): { perSecond: number; cpuUsPerRecord: number } {
  const fd = openSync(join(mkdtempSync(join(tmpdir(), 'bench-plain-')), 'plain.bin'), 'w');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    writeSync(fd, frame(encodeRecord()));
    if (i % 100 === 99) fsyncSync(fd);
  }
  fsyncSync(fd);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  closeSync(fd);
  return { perSecond: (n * 1000) / wall, cpuUsPerRecord: (cpu.user + cpu.system) / n };
}

/**
 * The wake-up floor: `threads` idle worker threads, each ticking at `hz` on a drift-corrected timer, and
 * beside them one bare worker ticking at 20 Hz on a plain timer, whose lateness is the jitter floor of a
 * machine with that many wake-ups.
 */
async function timerFloor(threads: number, hz: number): Promise<{ cpuPct: number; p50: number; p99: number }> {
  const source = (tickHz: number, report: boolean) => `
    const { parentPort } = require('node:worker_threads');
    const { performance } = require('node:perf_hooks');
    const start = performance.now();
    const late = [];
    let k = 0;
    const tick = () => {
      const due = start + ++k * ${1000 / tickHz};
      setTimeout(async () => {
        if (${report}) late.push(performance.now() - due);
        await Promise.resolve();
        tick();
      }, Math.max(0, due - performance.now()));
    };
    parentPort.on('message', () => parentPort.postMessage(late.splice(0)));
    tick();`;
  const workers = Array.from({ length: threads }, () => new Worker(source(hz, false), { eval: true }));
  const probe = new Worker(source(20, true), { eval: true });
  const lateness = () => new Promise<number[]>((resolve) => (probe.once('message', resolve), probe.postMessage('report')));
  try {
    await sleep(2000);
    await lateness(); // the warm-up's ticks do not count
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(WINDOW_MS);
    const cpu = process.cpuUsage(cpu0);
    const late = (await lateness()).sort((a, b) => a - b);
    const q = (x: number) => late[Math.min(late.length - 1, Math.floor(x * late.length))];
    return { cpuPct: ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100, p50: q(0.5), p99: q(0.99) };
  } finally {
    await Promise.all([...workers, probe].map((w) => w.terminate()));
  }
}

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  const res = await callAdminChannel(dataDir, action, args);
  if (!res) throw new Error('admin channel not answering');
  return res.result as T;
}

/** Writes SYNC_POINTS readings into closed capture files of at most 256 KiB. */
function writeCaptureFiles(dir: string, points: number): number {
  let files = 0;
  let writer: CaptureFileWriter | undefined;
  const header = (): CaptureFileHeader => ({
    upload_id: randomUUID(),
    component_type: 'core:component:sensor',
    component_name: 'bench',
    method_name: 'Readings',
    method_parameters: {},
    tags: [],
    kind: 'tabular',
  });
  for (let i = 0; i < points; i++) {
    writer ??= new CaptureFileWriter(join(dir, `${String(files++).padStart(6, '0')}`), header());
    writer.append(encodeRecord());
    if (writer.bytes >= 256 * 1024) {
      writer.close();
      writer = undefined;
    }
  }
  writer?.close();
  return files;
}

async function syncBench(): Promise<{ sync: number; raw: number; files: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-capture-cloud-'));
  const cloud = await startProgram([CLOUD, 'serve', '--data-dir', dataDir, '--port', '0'], /serving (\S+)/);
  try {
    const org = (await admin<{ id: string }>(dataDir, 'org.create', { name: 'bench' })).id;
    const machine = await admin<{ part_id: string; part_secret: string }>(dataDir, 'machine.create', { org, name: 'rover' });
    const access = {
      partId: machine.part_id,
      appAddress: cloud.address,
      credentials: { type: 'robot-secret' as const, entity: machine.part_id, payload: machine.part_secret },
      allowInsecure: false,
    };
    const part = connectPartCloud(access);
    const captureDir = mkdtempSync(join(tmpdir(), 'bench-sync-'));
    const files = writeCaptureFiles(captureDir, SYNC_POINTS);

    // Anchor: the same request bodies straight to the cloud, without upload ids or files, 4 in flight.
    const bodies = closedCaptureFiles(captureDir).map((f) => {
      const { header, records } = readCaptureFile(f.path);
      return uploadRequests({ ...header, upload_id: '' }, records, machine.part_id, [])[0].body;
    });
    await part.dataCaptureUpload(bodies[0]); // authenticate and connect outside the timing
    const queue = bodies.slice(1);
    const rawStart = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let body = queue.shift(); body; body = queue.shift()) await part.dataCaptureUpload(body);
      }),
    );
    const raw = ((SYNC_POINTS * (bodies.length - 1)) / bodies.length / (performance.now() - rawStart)) * 1000;

    const syncer = new Syncer({
      captureDir,
      additionalSyncPaths: [],
      tags: [],
      threads: 4,
      cloud: part,
      log: { info: () => undefined, warn: (m) => console.log(`  sync warning: ${m}`) },
    });
    const syncStart = performance.now();
    while (syncer.pending().length > 0) await syncer.syncOnce();
    const sync = (SYNC_POINTS / (performance.now() - syncStart)) * 1000;
    part.close();
    return { sync, raw, files };
  } finally {
    await cloud.stop();
  }
}

async function main(): Promise<void> {
  console.log(`bench:capture  sensors=${SENSORS} rates=${RATES.join(',')} window=${WINDOW_MS} ms sync_points=${SYNC_POINTS}`);
  console.log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (2 shared cores; CPU figures are less load-sensitive than wall ones)\n`,
  );

  const plain = plainAppend(50_000);
  console.log(
    `anchor: plain file append (encode + frame + write, fsync per 100): ${plain.perSecond.toFixed(0)} records/s, ${plain.cpuUsPerRecord.toFixed(1)} us CPU per record`,
  );

  const floor = await timerFloor(SENSORS, 5000 / SENSORS);
  const floorPct = floor.cpuPct;
  console.log(
    `anchor: ${SENSORS} bare worker threads ticking at ${5000 / SENSORS} Hz each (the wake-ups of 5,000 readings/s taken in their resources' own workers): ${floorPct.toFixed(1)} % of a core`,
  );
  console.log(
    `anchor: beside them, a bare worker ticking at 20 Hz on a plain timer (the jitter floor at that wake-up load): lateness p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms`,
  );

  const idle = await captureRun(0);
  const idleCpuPct = (idle.cpuMs / idle.wallMs) * 100;
  console.log(
    `runtime without capture (only the 20 Hz probe): ${idleCpuPct.toFixed(1)} % of a core; 20 Hz lateness p50 ${idle.jitter.p50} ms, p99 ${idle.jitter.p99} ms, achieved ${idle.jitter.hz.toFixed(2)} Hz\n`,
  );

  console.log(`GetReadings of an uncaptured sensor without capture: p50 ${idle.latency.p50.toFixed(3)} ms, p99 ${idle.latency.p99.toFixed(3)} ms\n`);
  console.log(
    'target/s  achieved/s  skipped  capture CPU (% of a core)  us CPU/reading  vs plain append  20 Hz lateness p50/p99 (ms)  GetReadings p50/p99 (ms)',
  );
  const runs: CaptureRun[] = [];
  for (const target of RATES) {
    const r = await captureRun(target);
    const achieved = (r.records * 1000) / r.wallMs;
    const cpuPct = (r.cpuMs / r.wallMs) * 100 - idleCpuPct;
    runs.push({ target, achieved, cpuPct, skipped: r.skipped, jitter: r.jitter, latency: r.latency });
    const perReading = (cpuPct * 10_000) / achieved;
    console.log(
      `${String(target).padStart(8)}  ${achieved.toFixed(0).padStart(10)}  ${String(r.skipped).padStart(7)}  ${cpuPct.toFixed(1).padStart(25)}  ${perReading.toFixed(1).padStart(14)}  ${(perReading / plain.cpuUsPerRecord).toFixed(1).padStart(14)}x  ${r.jitter.p50} / ${r.jitter.p99}  ${r.latency.p50.toFixed(3)} / ${r.latency.p99.toFixed(3)}`,
    );
  }
  const sustained = runs.filter((r) => r.achieved >= 0.97 * r.target).at(-1);
  console.log(
    `\nhighest sustained capture rate: ${sustained ? `${sustained.achieved.toFixed(0)} readings/s, capture CPU ${sustained.cpuPct.toFixed(1)} % of a core, the runtime's whole CPU ${(sustained.cpuPct + idleCpuPct).toFixed(1)} %` : 'none of the rates'} (sustained: >= 97 % of the target)`,
  );
  const at5k = runs.find((r) => r.target === 5000);
  if (at5k)
    console.log(
      `at 5,000 readings/s: achieved ${at5k.achieved.toFixed(0)}/s, capture CPU ${at5k.cpuPct.toFixed(1)} % of a core (target <= 25 %; ${(at5k.cpuPct / floorPct).toFixed(2)}x the bare wake-up floor), runtime CPU ${(at5k.cpuPct + idleCpuPct).toFixed(1)} %; 20 Hz p99 lateness ${at5k.jitter.p99} ms (target <= 5 ms), achieved ${at5k.jitter.hz.toFixed(2)} Hz`,
    );

  const s = await syncBench();
  console.log(
    `\nsync into platform-cloud: ${s.sync.toFixed(0)} points/s (${SYNC_POINTS} points in ${s.files} files of <= 256 KiB, 4 threads; target >= 40,000)`,
  );
  console.log(`anchor: the cloud's raw ingest of the same requests: ${s.raw.toFixed(0)} points/s; ratio sync/raw ${(s.sync / s.raw).toFixed(2)}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
