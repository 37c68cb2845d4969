// npm run bench:python — the Python client (cloud/client/python) against the TypeScript client
// (cloud/client, the anchor), on the same platform-cloud in the same run:
//
//   upload   POINTS tabular points through TabularDataCaptureUpload, batches of BATCH, one at a time;
//   filter   all of them back through TabularDataByFilter, pages of PAGE, following `last`;
//   sql      all of them back through one TabularDataBySQL query (decoded BSON documents).
//
// Each client uploads and reads its own component's points. The cloud's SQL result limits are raised
// so that one query can return all POINTS rows. The clients take turns over ROUNDS rounds (default 2),
// the first going first in even rounds and second in odd ones, and each measure reports its best round:
// on a shared machine the load moves more between two runs than the clients differ.
// POINTS, BATCH, PAGE, ROUNDS change the sizes.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { Order } from '../../cloud/client/data-client.js';

const POINTS = Number(process.env.POINTS ?? 100_000);
const BATCH = Number(process.env.BATCH ?? 1000);
const PAGE = Number(process.env.PAGE ?? 10_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

const main = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const pythonScript = fileURLToPath(new URL('./python_client.py', import.meta.url));
const pythonPath = fileURLToPath(new URL('../../cloud/client/python', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'bench-py-'));
const t0 = Date.UTC(2026, 0, 1);

interface Timings {
  upload_s: number;
  filter_s: number;
  sql_s: number;
  filter_rows: number;
  sql_rows: number;
}

async function startCloud(): Promise<{ address: string; stop: () => Promise<void> }> {
  const env = { ...process.env, PLATFORM_QUERY_PG_PORT: '0', PLATFORM_QUERY_MAX_ROWS: String(POINTS * 2), PLATFORM_QUERY_MAX_BYTES: String(512 * 1024 * 1024) };
  const child = spawn(process.execPath, [main, 'serve', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'], env });
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { address, stop: async () => (child.kill('SIGTERM'), await exited) };
}

async function admin<T>(action: string, args: Record<string, unknown>): Promise<T> {
  return (await callAdminChannel(dataDir, action, args))!.result as T;
}

async function typescriptRun(address: string, keyId: string, key: string, org: string, part: string, component: string): Promise<Timings> {
  const client = createCloudClient({ serviceHost: `http://${address}`, credentials: { type: 'api-key', authEntity: keyId, payload: key } });
  const data = client.dataClient;
  try {
    await data.listDatasetsByOrganizationID(org); // authenticate before the clock starts, as the Python client does in create()
    let start = performance.now();
    for (let b = 0; b < POINTS / BATCH; b++) {
      const items: Record<string, unknown>[] = [];
      const times: [Date, Date][] = [];
      for (let i = 0; i < BATCH; i++) {
        const n = b * BATCH + i;
        items.push({ readings: { temperature: 20 + (n % 100) / 10, humidity: n % 97 } });
        const t = new Date(t0 + n * 2);
        times.push([t, new Date(t.getTime() + 1)]);
      }
      await data.tabularDataCaptureUpload(items, part, 'rdk:component:sensor', component, 'Readings', times);
    }
    const upload_s = (performance.now() - start) / 1000;

    start = performance.now();
    let read = 0;
    let last = '';
    for (;;) {
      const page = await data.tabularDataByFilter({ componentName: component }, { limit: PAGE, sortOrder: Order.ORDER_ASCENDING, last });
      if (page.data.length === 0) break;
      read += page.data.length;
      last = page.last;
    }
    const filter_s = (performance.now() - start) / 1000;

    start = performance.now();
    const docs = await data.tabularDataBySQL(org, `SELECT time_requested, data FROM readings WHERE component_name = '${component}'`);
    const sql_s = (performance.now() - start) / 1000;
    return { upload_s, filter_s, sql_s, filter_rows: read, sql_rows: docs.length };
  } finally {
    client.close();
  }
}

function pythonRun(address: string, keyId: string, key: string, org: string, part: string, component: string): Promise<Timings> {
  const args = [pythonScript, address, keyId, key, org, part, component, String(POINTS), String(BATCH), String(PAGE)];
  return new Promise((resolve, reject) =>
    execFile('/usr/bin/python3', args, { env: { ...process.env, PYTHONPATH: pythonPath }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`python bench failed: ${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Timings),
    ),
  );
}

const cloud = await startCloud();
try {
  const org = (await admin<{ id: string }>('org.create', { name: 'bench' })).id;
  const machine = await admin<{ part_id: string }>('machine.create', { org, name: 'rover' });
  const key = await admin<{ id: string; key: string }>('key.create', { org, role: 'owner' });
  console.log(
    `bench:python — ${POINTS} points, batches of ${BATCH}, pages of ${PAGE}, best of ${ROUNDS} rounds; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const runs: { ts: Timings[]; py: Timings[] } = { ts: [], py: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const ts = () => typescriptRun(cloud.address, key.id, key.key, org, machine.part_id, `thermo-ts-${round}`).then((t) => runs.ts.push(t));
    const py = () => pythonRun(cloud.address, key.id, key.key, org, machine.part_id, `thermo-py-${round}`).then((t) => runs.py.push(t));
    if (round % 2 === 0) await ts().then(py);
    else await py().then(ts);
  }
  for (const t of [...runs.ts, ...runs.py]) {
    if (t.filter_rows !== POINTS || t.sql_rows !== POINTS) throw new Error(`a client read back ${t.filter_rows} / ${t.sql_rows} of ${POINTS} points`);
  }
  const best = (ts: Timings[]): Timings => ({
    upload_s: Math.min(...ts.map((t) => t.upload_s)),
    filter_s: Math.min(...ts.map((t) => t.filter_s)),
    sql_s: Math.min(...ts.map((t) => t.sql_s)),
    filter_rows: POINTS,
    sql_rows: POINTS,
  });
  const ts = best(runs.ts);
  const py = best(runs.py);
  const row = (label: string, a: number, b: number, unit: (s: number) => string) =>
    console.log(`| ${label} | ${unit(b)} | ${unit(a)} | ${(b / a).toFixed(2)} |`);
  const rate = (s: number) => `${s.toFixed(2)} s (${Math.round(POINTS / s).toLocaleString('en')} points/s)`;
  console.log('| measure | Python | TypeScript (anchor) | ratio Python/TypeScript (time) |');
  console.log('|---|---|---|---|');
  row(`upload ${POINTS} points`, ts.upload_s, py.upload_s, rate);
  row(`tabular_data_by_filter, all ${POINTS}`, ts.filter_s, py.filter_s, rate);
  row(`tabular_data_by_sql, all ${POINTS}`, ts.sql_s, py.sql_s, rate);
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await cloud.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
