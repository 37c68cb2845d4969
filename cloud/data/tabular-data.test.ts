// GetLatestTabularData looks back one year of sync time; checked against a store opened in-process,
// where the sync time can be moved.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertTabular } from '../datasync/tabular-ingest.js';
import { Store } from '../store/store.js';
import type { PartInfo } from './parts.js';
import { getLatestTabularData } from './tabular-data.js';

const part: PartInfo = { kind: 'part', partId: 'p1', partName: 'p1-main', machineId: 'm1', robotName: 'm', locationId: 'l1', organizationId: 'o1' };
const source = { partId: 'p1', resourceName: 'thermo', resourceSubtype: 'rdk:component:sensor', methodName: 'Readings' };

test('only data synced within the last year counts as the latest', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'latest-'));
  const store = await Store.open(dir);
  try {
    const capture = { part, componentType: source.resourceSubtype, componentName: source.resourceName, methodName: 'Readings', tags: [] };
    await insertTabular(store, capture, [{ timeRequested: new Date(), timeReceived: new Date(), data: { readings: { v: 1 } } }]);
    t.true((await getLatestTabularData(store, source)).found);
    await store.execute('UPDATE tabular_data SET time_synced = now() - INTERVAL 366 DAY');
    t.deepEqual(await getLatestTabularData(store, source), { found: false });
    await store.execute('UPDATE tabular_data SET time_synced = now() - INTERVAL 364 DAY');
    t.true((await getLatestTabularData(store, source)).found);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
