// Export throughput (issue 35), against a real platform-cloud (from dist/) through the TypeScript client:
//   - COCO: a version of BENCH_EXPORT_IMAGES images (default 10,000) exported as one COCO zip, next to a
//     plain copy of the same bytes (every image's blob file read and written into one file, in the same
//     run on the same disk). Target: the export reaches at least 0.5x the plain copy's MB/s.
//   - MCAP: a part's BENCH_MCAP_READINGS readings (default 100,000) and BENCH_MCAP_IMAGES images (default
//     1,000) exported as one MCAP file (zstd chunks): messages/s and MB/s.
// Run: npm run bench:export   (smaller: BENCH_EXPORT_IMAGES=2000 BENCH_MCAP_READINGS=20000 npm run bench:export)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { readMcap } from '../../cloud/data/testing/read-mcap.js';
import { noisyJpeg } from '../../cloud/web/testing-images.js';

const main = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const IMAGES = Number(process.env.BENCH_EXPORT_IMAGES ?? 10_000);
const READINGS = Number(process.env.BENCH_MCAP_READINGS ?? 100_000);
const MCAP_IMAGES = Number(process.env.BENCH_MCAP_IMAGES ?? 1_000);
const CONCURRENCY = 8;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function startCloud(dataDir: string) {
  const child = spawn(process.execPath, [main, 'serve', '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, PLATFORM_QUERY_PG_PORT: String(await freePort()) },
  });
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const serving = /platform-cloud serving (\S+)/.exec(out);
      if (serving) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(serving[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code} before serving`)));
  });
  return { child, address };
}

/** Runs `fn(i)` for i in [0, n) with `CONCURRENCY` calls in flight; returns the results in order. */
async function pool<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

const mb = (bytes: number) => bytes / 1e6;
const seconds = (start: number) => (performance.now() - start) / 1000;

async function main_() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-export-'));
  const out = mkdtempSync(join(tmpdir(), 'bench-export-out-'));
  const cloud = await startCloud(dataDir);
  try {
    const admin = async <T = Record<string, string>>(action: string, args: Record<string, unknown>) =>
      (await callAdminChannel(dataDir, action, args))!.result as T;
    const orgId = (await admin('org.create', { name: 'bench' })).id;
    const key = await admin('key.create', { org: orgId, role: 'owner' });
    const machine = await admin('machine.create', { org: orgId, name: 'rover' });
    const client = createCloudClient({ serviceHost: `http://${cloud.address}`, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
    const data = client.dataClient;
    const part = machine.part_id;
    console.log(`bench:export  images ${IMAGES}, MCAP readings ${READINGS} + images ${MCAP_IMAGES}, load average ${loadavg()[0].toFixed(2)}`);

    // ---- COCO ----
    // 20 distinct noisy 320x240 JPEGs (~30-40 KB each, as camera frames), uploaded round-robin.
    const frames = Array.from({ length: 20 }, (_, i) => noisyJpeg(320, 240, i + 1));
    const t0 = performance.now();
    const ids = await pool(IMAGES, (i) => {
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000);
      return data.binaryDataCaptureUpload(frames[i % frames.length], part, 'camera', 'cam', 'GetImages', '.jpg', [at, at]);
    });
    console.log(`  uploaded ${IMAGES} images in ${seconds(t0).toFixed(1)} s`);
    const datasetId = await data.createDataset('bench', orgId);
    for (let i = 0; i < ids.length; i += 1000) await data.addBinaryDataToDatasetByIds(ids.slice(i, i + 1000), datasetId);
    await Promise.all(ids.slice(0, 1000).map((id, i) => data.addBoundingBoxToImageById(id, `label-${i % 5}`, 0.1, 0.2, 0.5, 0.6)));
    const t1 = performance.now();
    const version = await data.createDatasetVersion(datasetId, { train: 0.8, valid: 0.1, test: 0.1, seed: 1 });
    console.log(`  CreateDatasetVersion of ${version.imageCount} images (sizes read from headers): ${seconds(t1).toFixed(2)} s`);

    const zip = join(out, 'coco.zip');
    const t2 = performance.now();
    await data.exportDataset(datasetId, zip, { version: version.version, format: 'coco' });
    const exportS = seconds(t2);
    const zipBytes = statSync(zip).size;

    // The plain copy: the same blob files, read and written into one file.
    const keys = ids.map((id) => join(dataDir, 'blobs', orgId, id));
    const copy = join(out, 'plain.bin');
    const t3 = performance.now();
    const sink = createWriteStream(copy);
    for (const file of keys) if (!sink.write(await readFile(file))) await once(sink, 'drain');
    await new Promise<void>((resolve) => sink.end(resolve));
    const copyS = seconds(t3);
    const copyBytes = statSync(copy).size;
    const exportRate = mb(zipBytes) / exportS;
    const copyRate = mb(copyBytes) / copyS;
    console.log(
      `  COCO export of ${IMAGES} images: ${mb(zipBytes).toFixed(1)} MB in ${exportS.toFixed(2)} s = ${exportRate.toFixed(1)} MB/s (${(IMAGES / exportS).toFixed(0)} images/s)`,
    );
    console.log(`  plain copy of the same ${mb(copyBytes).toFixed(1)} MB: ${copyS.toFixed(2)} s = ${copyRate.toFixed(1)} MB/s`);
    console.log(`  export / plain copy: ${(exportRate / copyRate).toFixed(2)}x (target >= 0.5x)`);

    // ---- MCAP ----
    const mcapMachine = await admin('machine.create', { org: orgId, name: 'arm' });
    const batch = 1000;
    const t4 = performance.now();
    await pool(Math.ceil(READINGS / batch), (b) => {
      const n = Math.min(batch, READINGS - b * batch);
      const times = Array.from({ length: n }, (_, i) => {
        const at = new Date(Date.UTC(2026, 0, 2) + (b * batch + i) * 10);
        return [at, at] as [Date, Date];
      });
      const points = Array.from({ length: n }, (_, i) => ({ readings: { temperature: 20 + ((b * batch + i) % 100) / 10, humidity: 40 } }));
      return data.tabularDataCaptureUpload(points, mcapMachine.part_id, 'rdk:component:sensor', 'thermo', 'Readings', times);
    });
    await pool(MCAP_IMAGES, (i) => {
      const at = new Date(Date.UTC(2026, 0, 2) + i * 1000 + 5);
      return data.binaryDataCaptureUpload(frames[i % frames.length], mcapMachine.part_id, 'camera', 'cam', 'GetImages', '.jpg', [at, at]);
    });
    console.log(`  uploaded ${READINGS} readings and ${MCAP_IMAGES} images in ${seconds(t4).toFixed(1)} s`);
    const mcapFile = join(out, 'run.mcap');
    const t5 = performance.now();
    const { bytes } = await data.exportMcap({ partId: mcapMachine.part_id }, mcapFile);
    const mcapS = seconds(t5);
    const messages = READINGS + MCAP_IMAGES;
    console.log(
      `  MCAP export: ${messages} messages, ${mb(bytes).toFixed(1)} MB (zstd) in ${mcapS.toFixed(2)} s = ${(messages / mcapS).toFixed(0)} messages/s, ${(mb(bytes) / mcapS).toFixed(1)} MB/s`,
    );
    const t6 = performance.now();
    const read = await readMcap(await readFile(mcapFile));
    console.log(`  read back with CRC checks: messageCount ${read.messageCount} (expected ${messages}) in ${seconds(t6).toFixed(2)} s`);
    if (read.messageCount !== BigInt(messages)) throw new Error('the MCAP does not hold every message');
    client.close();
  } finally {
    cloud.child.kill('SIGTERM');
    await new Promise((resolve) => cloud.child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
}

await main_();
