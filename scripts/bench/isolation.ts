// npm run bench:isolation — does one tenant's heavy querying slow another tenant's data API?
//
// One platform-cloud (from dist/, default limits). Organization B measures two calls, one at a time:
//   filter   TabularDataByFilter for 1 row (limit 1);
//   upload   a 10-point tabular DataCaptureUpload.
// First on an idle cloud (the anchor), then while organization A keeps HEAVY concurrent heavy SQL queries
// running (each `SELECT count(*) FROM range(1e6) a, range(1e6) b`, restarted as soon as it ends or is
// refused). Prints p50 and p99 of each, the ratio to idle, and the targets: p99 <= 250 ms and <= 5x idle.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient, type CloudClient } from '../../cloud/client/cloud-client.js';

const HEAVY = Number(process.env.BENCH_HEAVY ?? 8);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const main = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'bench-isolation-'));
const sensor = 'rdk:component:sensor';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const admin = async <T = Record<string, string>>(action: string, args: Record<string, unknown>) => (await callAdminChannel(dataDir, action, args))!.result as T;

async function measure(b: CloudClient, orgB: string, partB: string): Promise<{ filter: number[]; upload: number[] }> {
  const filter: number[] = [];
  const upload: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    let t = process.hrtime.bigint();
    await b.dataClient.tabularDataByFilter({ organizationIds: [orgB] }, { limit: 1 });
    filter.push(ms(t));
    const now = Date.now();
    t = process.hrtime.bigint();
    await b.dataClient.tabularDataCaptureUpload(
      Array.from({ length: 10 }, (_, k) => ({ readings: { v: k } })),
      partB,
      sensor,
      'thermo',
      'Readings',
      Array.from({ length: 10 }, (_, k) => [new Date(now + k), new Date(now + k + 1)] as [Date, Date]),
    );
    upload.push(ms(t));
  }
  return { filter, upload };
}

async function mainBench() {
  const child = spawn(process.execPath, [main, 'serve', '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, PLATFORM_QUERY_PG_PORT: '0' },
  });
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code}`)));
  });
  try {
    const orgA = (await admin('org.create', { name: 'heavy' })).id;
    const orgB = (await admin('org.create', { name: 'quiet' })).id;
    const keyA = await admin('key.create', { org: orgA, role: 'owner' });
    const keyB = await admin('key.create', { org: orgB, role: 'owner' });
    const partB = (await admin('machine.create', { org: orgB, name: 'rover' })).part_id;
    const serviceHost = `http://${address}`;
    const a = createCloudClient({ serviceHost, credentials: { type: 'api-key', authEntity: keyA.id, payload: keyA.key } });
    const b = createCloudClient({ serviceHost, credentials: { type: 'api-key', authEntity: keyB.id, payload: keyB.key } });
    await measure(b, orgB, partB); // warm-up: tokens, prepared statements, JIT
    const idle = await measure(b, orgB, partB);

    let stop = false;
    const outcomes = new Map<string, number>();
    const heavyLoop = async () => {
      while (!stop) {
        try {
          await a.dataClient.tabularDataBySQL(orgA, 'SELECT count(*) FROM range(1000000) a, range(1000000) b');
          outcomes.set('answered', (outcomes.get('answered') ?? 0) + 1);
        } catch (err) {
          const code = String((err as { code?: number }).code);
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
        }
      }
    };
    const loops = Array.from({ length: HEAVY }, heavyLoop);
    await new Promise((r) => setTimeout(r, 1000));
    const loaded = await measure(b, orgB, partB);
    stop = true;
    await Promise.all(loops);
    a.close();
    b.close();

    console.log(
      `bench:isolation  ${cpus().length} cores, load ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}, ${SAMPLES} samples per call`,
    );
    console.log(`org A: ${HEAVY} concurrent heavy queries; outcomes (gRPC code: count) ${JSON.stringify(Object.fromEntries(outcomes))}`);
    for (const call of ['filter', 'upload'] as const) {
      const [i50, i99, l50, l99] = [pct(idle[call], 0.5), pct(idle[call], 0.99), pct(loaded[call], 0.5), pct(loaded[call], 0.99)];
      const ok = l99 <= 250 && l99 <= 5 * i99;
      console.log(
        `${call.padEnd(7)} idle p50 ${i50.toFixed(1)} ms p99 ${i99.toFixed(1)} ms | under load p50 ${l50.toFixed(1)} ms p99 ${l99.toFixed(1)} ms` +
          ` | p99 ratio ${(l99 / i99).toFixed(2)}x (target <= 250 ms and <= 5x) ${ok ? 'MET' : 'NOT MET'}`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await mainBench();
