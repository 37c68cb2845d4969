// Part config events across the processes of the scale-out mode (part-events.ts): a revision saved
// through one PgStore reaches the watchers of another on the same database (LISTEN/NOTIFY), and a
// watcher that starts listening after a save still hears of it (the catch-up from part_configs). The
// embedded store's events stay in its process, as before.
import test from 'ava';
import { createMachine, createOrganization } from '../admin/tenancy.js';
import { storeChannels } from '../store/pg-notify.js';
import type { TabularStore } from '../store/tabular.js';
import { sameDatabase } from '../testing/same-database.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { savePartConfig } from './part-configs.js';
import { partEvents } from './part-events.js';

const [duckdb, postgres] = tabularBackends(test);

/** Resolves with the first revision of partId at or above `revision` that store's events announce. */
function revisionSeen(store: TabularStore, partId: string, revision: number): Promise<number> {
  return new Promise((resolve) => {
    const events = partEvents(store);
    const on = (id: string, rev: number) => {
      if (id !== partId || rev < revision) return;
      events.off('config', on);
      resolve(rev);
    };
    events.on('config', on);
  });
}

async function aPart(store: TabularStore): Promise<string> {
  const org = await createOrganization(store, { name: 'events' });
  return (await createMachine(store, { org: org.id, name: 'rover' })).part_id;
}

test('postgres: a config saved through one process reaches the watchers of another', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a);
  const partId = await aPart(a);
  const onB = revisionSeen(b, partId, 1);
  const onA = revisionSeen(a, partId, 1);
  await storeChannels(b).ready();
  await savePartConfig(a, partId, { components: [] }, 'test');
  t.is(await onA, 1);
  t.is(await onB, 1);
  // And the other way round.
  const back = revisionSeen(a, partId, 2);
  await storeChannels(a).ready();
  await savePartConfig(b, partId, { components: [] }, 'test');
  t.is(await back, 2);
});

test('postgres: a watcher whose process was not listening yet when a config was saved hears of it', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a);
  const partId = await aPart(a);
  // Saved before B listens at all: no notification can reach B; the catch-up reads part_configs.
  await savePartConfig(a, partId, { components: [] }, 'test');
  t.is(await revisionSeen(b, partId, 1), 1);
});

test('duckdb: a config saved reaches the watchers of the same store (the embedded default, as before)', async (t) => {
  const store = await duckdb.open(t);
  const partId = await aPart(store);
  const seen = revisionSeen(store, partId, 1);
  await savePartConfig(store, partId, { components: [] }, 'test');
  t.is(await seen, 1);
});
