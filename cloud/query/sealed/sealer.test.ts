// The sealer (sealer.ts) when things go wrong: a sealer that dies midway leaves every row readable and
// the day sealed whole by the next pass; rows that arrive while a day is written leave it unsealed for
// the next pass (and stop the pass there); two processes elect one sealer, and a day is sealed once.
// DeleteTabularData's rewrite of sealed segments is tested through the data API
// (cloud/data/tabular-data-sealed.test.ts).
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertTabular } from '../../datasync/tabular-ingest.js';
import type { BlobStore, BlobWriter } from '../../store/blob-store.js';
import { openBlobWriter } from '../../store/blob-store.js';
import { ensureReadingsPartition, readingsPartitionName } from '../../store/pg-readings.js';
import type { PgStore } from '../../store/pg-store.js';
import type { StoreWithBlobs } from '../../store/tabular.js';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { SqlSandbox } from '../sql/sql-sandbox.js';
import { DAY, today, upload } from './differential-fixture.js';
import { startScaleOutQuery } from './scale-out-query.js';
import { ReadingsSealer } from './sealer.js';

const [, pgBackend] = tabularBackends(test);
type Tables = PgStore & StoreWithBlobs;

/** Uploads of org-a and org-b synced 2 days ago and 1 day ago (closed) and today; returns the row count. */
async function fill(store: Tables): Promise<number> {
  let rows = 0;
  for (let u = 0; u < 6; u++) {
    for (const org of ['org-a', 'org-b']) {
      const { capture, points, uploadId } = upload(u, org);
      await insertTabular(store, capture, points, `${uploadId}`);
      const synced = new Date(today - (u % 3) * DAY + u * 1000);
      await ensureReadingsPartition(store, synced);
      await store.execute('UPDATE tabular_data SET time_synced = ? WHERE upload_id = ?', [synced, uploadId]);
      rows += points.length;
    }
  }
  return rows;
}

const workDir = (t: { teardown(fn: () => void): void }) => {
  const dir = mkdtempSync(join(tmpdir(), 'sealer-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** Every row of the organization as the scale-out engine reads it, sealed or not. */
async function countVia(store: Tables, dir: string, org: string): Promise<number> {
  const q = startScaleOutQuery(store, { dataDir: join(dir, 'node'), seal: false });
  try {
    const [{ n }] = await new SqlSandbox(q.connect).query(org, 'SELECT count(*) AS n FROM readings');
    return Number(n);
  } finally {
    await q.stop();
  }
}

const allCount = async (store: Tables) => {
  const [{ n }] = await store.query("SELECT count(*) AS n FROM tabular_data WHERE NOT internal AND organization_id = 'org-a'");
  return Number(n);
};

/** store with its blobs replaced: the writer's commit runs `onCommit` first (and may throw). */
function withBlobs(store: Tables, onCommit: (n: number) => Promise<void>): Tables {
  let commits = 0;
  const blobs: BlobStore = {
    put: (k, c) => store.blobs.put(k, c),
    get: (k, s) => store.blobs.get(k, s),
    delete: (k) => store.blobs.delete(k),
    async writer(): Promise<BlobWriter> {
      const inner = await openBlobWriter(store.blobs);
      return {
        get size() {
          return inner.size;
        },
        write: (c) => inner.write(c),
        async commit(key) {
          await onCommit(++commits);
          await inner.commit(key);
        },
        abort: () => inner.abort(),
      };
    },
  };
  return new Proxy(store, { get: (target, p) => (p === 'blobs' ? blobs : Reflect.get(target, p, target)) }) as Tables;
}

test('a sealer that dies midway leaves every row readable, and the next pass seals each day once', async (t) => {
  const store = (await pgBackend.open(t)) as Tables;
  const dir = workDir(t);
  const total = await fill(store);
  const expected = await allCount(store);
  const dying = new ReadingsSealer(
    withBlobs(store, async (n) => {
      if (n === 2) throw new Error('killed');
    }),
    { workDir: join(dir, 'a'), graceMs: 0 },
  );
  await t.throwsAsync(dying.sealClosedDays(), { message: 'killed' });
  t.deepEqual(await store.query('SELECT * FROM tabular_segments'), []);
  t.is(await countVia(store, dir, 'org-a'), expected);
  const sealed = await new ReadingsSealer(store, { workDir: join(dir, 'b'), graceMs: 0 }).sealClosedDays();
  t.deepEqual(
    sealed.map((d) => (today - d.day.getTime()) / DAY),
    [2, 1],
  );
  const [{ n, s }] = await store.query('SELECT count(*) AS n, sum(row_count) AS s FROM tabular_segments');
  t.is(Number(n), 4);
  const [{ left }] = await store.query('SELECT count(*) AS left FROM tabular_data');
  t.is(Number(s) + Number(left), total, 'every row in exactly one place');
  t.is(await countVia(store, dir, 'org-a'), expected);
});

test('rows that arrive while a day is written leave it unsealed (and the later days too) until the next pass', async (t) => {
  const store = (await pgBackend.open(t)) as Tables;
  const dir = workDir(t);
  await fill(store);
  const twoDaysAgo = new Date(today - 2 * DAY);
  const late = upload(40, 'org-a');
  const sealer = new ReadingsSealer(
    withBlobs(store, async (n) => {
      if (n !== 1) return;
      // An upload stamped in the day being sealed, committed after the day was read.
      await insertTabular(store, late.capture, late.points, 'late');
      await store.execute('UPDATE tabular_data SET time_synced = ? WHERE upload_id = ?', [new Date(twoDaysAgo.getTime() + 5), 'late']);
    }),
    { workDir: dir, graceMs: 0 },
  );
  t.deepEqual(await sealer.sealClosedDays(), []);
  t.deepEqual(await store.query('SELECT * FROM tabular_sealed_days'), []);
  const partitions = await store.query('SELECT relname FROM pg_class WHERE relname = $1', [readingsPartitionName(twoDaysAgo)]);
  t.is(partitions.length, 1);
  const expected = await allCount(store);
  t.is(await countVia(store, dir, 'org-a'), expected, 'the late rows count too');
  const sealed = await new ReadingsSealer(store, { workDir: dir, graceMs: 0 }).sealClosedDays();
  t.is(sealed.length, 2);
  t.is(await countVia(store, dir, 'org-a'), expected);
});

test('two processes elect one sealer: each closed day is sealed once', async (t) => {
  const store = (await pgBackend.open(t)) as Tables;
  const dir = workDir(t);
  await fill(store);
  const expected = await allCount(store);
  const nodes = [0, 1].map((i) => startScaleOutQuery(store, { dataDir: join(dir, `n${i}`), sealGraceMs: 0 }));
  try {
    for (let i = 0; i < 600; i++) {
      const [{ n }] = await store.query('SELECT count(*) AS n FROM tabular_sealed_days');
      if (Number(n) === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    for (const node of nodes) await node.stop();
  }
  const days = await store.query('SELECT day, row_count FROM tabular_sealed_days ORDER BY day');
  t.is(days.length, 2);
  const segments = await store.query('SELECT organization_id, day, row_count FROM tabular_segments ORDER BY day, organization_id');
  t.is(segments.length, 4, 'one segment per organization and day');
  for (const d of days) {
    const mine = segments.filter((s) => (s.day as Date).getTime() === (d.day as Date).getTime());
    t.is(
      mine.reduce((n, s) => n + Number(s.row_count), 0),
      Number(d.row_count),
    );
  }
  t.is(await countVia(store, dir, 'org-a'), expected);
});
