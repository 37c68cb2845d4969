// The windowed page reader returns exactly what a plain ORDER BY ... LIMIT returns, in both orders,
// with cursors, with filters and with data that arrived out of capture-time order.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Order } from '../../gen/platform/app/data/v1/data.js';
import { insertTabular } from '../datasync/tabular-ingest.js';
import { Store } from '../store/store.js';
import { readPage } from './page-query.js';
import type { PartInfo } from './parts.js';
import { cursorOf, pageOf } from './rows.js';

const part: PartInfo = { kind: 'part', partId: 'p1', partName: 'p', machineId: 'm1', robotName: 'm', locationId: 'l1', organizationId: 'o1' };

test('windowed pages equal plain top-N pages', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'page-query-'));
  const store = await Store.open(dir);
  try {
    const base = Date.parse('2026-01-01T00:00:00Z');
    // Mostly in order, a late batch with old times, a burst sharing one timestamp, and a sparse source.
    for (let b = 0; b < 6; b++) {
      const points = Array.from({ length: 500 }, (_, i) => ({
        timeRequested: new Date(base + (b * 500 + i) * 1000),
        timeReceived: new Date(),
        data: { readings: { i } },
      }));
      await insertTabular(store, { part, componentType: 'sensor', componentName: 'a', methodName: 'Readings', tags: [] }, points);
    }
    const late = Array.from({ length: 300 }, (_, i) => ({
      timeRequested: new Date(base + i * 7000 + 500),
      timeReceived: new Date(),
      data: { readings: { late: i } },
    }));
    await insertTabular(store, { part, componentType: 'sensor', componentName: 'a', methodName: 'Readings', tags: [] }, late);
    const burst = Array.from({ length: 120 }, () => ({ timeRequested: new Date(base + 1_500_000), timeReceived: new Date(), data: { readings: {} } }));
    await insertTabular(store, { part, componentType: 'sensor', componentName: 'a', methodName: 'Readings', tags: [] }, burst);
    const sparse = [5, 900, 2999].map((s) => ({ timeRequested: new Date(base + s * 1000), timeReceived: new Date(), data: { readings: {} } }));
    await insertTabular(store, { part, componentType: 'sensor', componentName: 'rare', methodName: 'Readings', tags: [] }, sparse);

    const cols = 'seq, epoch_us(time_requested) AS t_us';
    for (const [sortOrder, filter] of [
      [Order.ORDER_DESCENDING, ''],
      [Order.ORDER_ASCENDING, ''],
      [Order.ORDER_DESCENDING, 'rare'],
      [Order.ORDER_ASCENDING, 'rare'],
    ] as const) {
      const where = filter ? { sql: 'component_name = ?', params: [filter] } : { sql: 'true', params: [] };
      let last = '';
      let pages = 0;
      for (;;) {
        const page = pageOf({ limit: 70, last, sortOrder });
        const windowed = await readPage(store, 'tabular_data', cols, where, page, 0n);
        const plain = await store.query(`SELECT ${cols} FROM tabular_data WHERE ${where.sql}${page.after} ORDER BY ${page.orderBy} LIMIT ${page.limit}`, [
          ...where.params,
          ...page.afterParams,
        ]);
        t.deepEqual(windowed, plain);
        if (windowed.length === 0) break;
        last = cursorOf(windowed[windowed.length - 1]);
        pages++;
      }
      t.is(pages, filter ? 1 : Math.ceil(3423 / 70));
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a first page across a long gap in capture times is exact', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'page-gap-'));
  const store = await Store.open(dir);
  try {
    const capture = { part, componentType: 'sensor', componentName: 'a', methodName: 'Readings', tags: [] };
    const old = Date.parse('2025-01-01T00:00:00Z');
    await insertTabular(
      store,
      capture,
      Array.from({ length: 2000 }, (_, i) => ({ timeRequested: new Date(old + i * 1000), timeReceived: new Date(), data: { readings: {} } })),
    );
    await insertTabular(
      store,
      capture,
      Array.from({ length: 10 }, (_, i) => ({ timeRequested: new Date(Date.now() - i), timeReceived: new Date(), data: { readings: {} } })),
    );
    const cols = 'seq, epoch_us(time_requested) AS t_us';
    const where = { sql: 'true', params: [] };
    const page = pageOf({ limit: 50, last: '', sortOrder: Order.ORDER_UNSPECIFIED });
    const windowed = await readPage(store, 'tabular_data', cols, where, page, 0n);
    const plain = await store.query(`SELECT ${cols} FROM tabular_data ORDER BY ${page.orderBy} LIMIT 50`);
    t.is(windowed.length, 50);
    t.deepEqual(windowed, plain);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
