// The hostile-query suite (cloud/query/sql/hostile-inputs.ts) in both modes: every escape attempt is
// refused by the scale-out engine with exactly the embedded engine's status code and message, over the
// same uploads (three days sealed, today unsealed), and the data is unchanged afterwards.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StatusError } from '../../../core/serving/status-error.js';
import type { PgStore } from '../../store/pg-store.js';
import type { Store } from '../../store/store.js';
import type { StoreWithBlobs } from '../../store/tabular.js';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { hostile, LIMITS } from '../sql/hostile-inputs.js';
import { SqlSandbox } from '../sql/sql-sandbox.js';
import { storeSameUploads } from './differential-fixture.js';
import { startScaleOutQuery, type ScaleOutQuery } from './scale-out-query.js';

const [duckBackend, pgBackend] = tabularBackends(test);
let duck: Store;
let pg: PgStore & StoreWithBlobs;
let scaleOut: ScaleOutQuery;
let workDir: string;
let sandboxes: SqlSandbox[];

test.before(async () => {
  duck = (await duckBackend.openForFile()) as Store;
  pg = (await pgBackend.openForFile()) as PgStore & StoreWithBlobs;
  await storeSameUploads(duck, pg);
  workDir = mkdtempSync(join(tmpdir(), 'scale-out-hostile-'));
  scaleOut = startScaleOutQuery(pg, { dataDir: workDir, seal: false, sealGraceMs: 0 });
  await scaleOut.sealer.sealClosedDays();
  const limits = { timeoutMs: 5000, maxRows: 1000, maxBytes: 1_000_000 };
  sandboxes = [new SqlSandbox(() => duck.instance.connect(), limits), new SqlSandbox(scaleOut.connect, limits)];
});

test.after.always(async () => {
  await scaleOut?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const refusal = async (sandbox: SqlSandbox, sql: string) => {
  try {
    await sandbox.query('org-a', sql);
    return 'answered';
  } catch (err) {
    return err instanceof StatusError ? { code: err.code, message: err.message } : { error: String(err) };
  }
};

for (const [name, sql, reason] of hostile) {
  test.serial(`refused the same in both modes: ${name}`, async (t) => {
    const [embedded, scaled] = [await refusal(sandboxes[0], sql), await refusal(sandboxes[1], sql)];
    if (reason.source === LIMITS.source) {
      // Refused by a time or size limit: how far a run gets in its time depends on the machine's load,
      // so each mode either finishes within the limits or is stopped by one, naming it.
      for (const r of [embedded, scaled]) if (typeof r !== 'string') t.regex(String(r.message), LIMITS, sql);
      t.pass();
      return;
    }
    t.deepEqual(scaled, embedded, sql);
  });
}

test.serial('nothing changed: the readings of org-a read the same in both modes afterwards', async (t) => {
  const sql = 'SELECT count(*) AS n, count(DISTINCT component_name) AS c, max(time_synced) AS last FROM readings';
  const [a, b] = await Promise.all(sandboxes.map((s) => s.query('org-a', sql)));
  t.deepEqual(b, a);
  const [{ n }] = await pg.query('SELECT count(*) AS n FROM tabular_segments');
  t.is(Number(n), 6);
});
