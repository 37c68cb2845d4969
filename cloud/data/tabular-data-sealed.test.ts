// The data API's tabular reads on PostgreSQL once the SQL engine has sealed closed days (issue 33):
// the sealer moves those days into Parquet segments and drops their partitions, and TabularDataByFilter
// (every order, cursor and count), GetLatestTabularData and ExportTabularData answer exactly as they
// did before the sealing, from the unsealed rows and the segments together; DeleteTabularData deletes
// sealed rows too, rewriting their segments.
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Order, type Filter, type TabularDataByFilterRequest } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { startScaleOutQuery } from '../query/sealed/scale-out-query.js';
import { ensureReadingsPartition } from '../store/pg-readings.js';
import type { PgStore } from '../store/pg-store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { binaryFixture, emptyFilter } from '../testing/binary-fixture.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { readReadings } from './sealed-readings.js';
import { deleteTabularData, exportTabularData, getLatestTabularData, tabularDataByFilter } from './tabular-data.js';

const [, postgres] = tabularBackends(test);
const DAY = 86_400_000;

const idOf = (data: unknown) => String((data as { readings: { id: string } }).readings.id);

async function sealedFixture(t: ExecutionContext) {
  const store = (await postgres.open(t)) as PgStore & StoreWithBlobs;
  const fx = await binaryFixture(store);
  const today = Math.floor(Date.now() / DAY) * DAY;
  // Two closed days (always past the sealer's grace) and today, which stays in PostgreSQL.
  const days = [today - 3 * DAY, today - 2 * DAY, today];
  for (const day of days) await ensureReadingsPartition(store, new Date(day));
  let seq = 0;
  const insert = async (id: string, synced: number, captured: number, fields: { machine?: 'rover' | 'arm' | 'other'; component?: string } = {}) => {
    const name = fields.machine ?? 'rover';
    const m = fx.machines[name];
    const org = name === 'other' ? fx.orgB : fx.orgA;
    await store.execute(
      `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type,
         component_name, method_name, tags, time_requested, time_received, time_synced, data, internal, size_bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'rdk:component:sensor', ?, 'Readings', CAST(? AS VARCHAR[]), CAST(? AS TIMESTAMPTZ), ?, ?, ?, false, 7)`,
      [
        ++seq,
        `u-${id}`,
        org,
        m.location_id,
        m.machine_id,
        name,
        m.part_id,
        `${name}-main`,
        fields.component ?? 'thermo',
        ['t'],
        new Date(captured).toISOString().replace('Z', '001Z'),
        new Date(synced),
        new Date(synced),
        JSON.stringify({ readings: { id } }),
      ],
    );
  };
  for (const [d, day] of days.entries()) {
    for (let i = 0; i < 6; i++)
      await insert(`d${d}-${i}`, day + 3600_000 + i, day + 60_000 * i, { machine: i % 3 === 2 ? 'arm' : 'rover', component: i % 2 ? 'imu' : 'thermo' });
    // Rows of one capture time in one day: the cursor's seq decides.
    await insert(`d${d}-same-a`, day + 3600_000 + 10, day + 30_000);
    await insert(`d${d}-same-b`, day + 3600_000 + 11, day + 30_000);
  }
  // Captured long ago, uploaded today: unsealed, yet older than every sealed row.
  await insert('late', today + 3600_000 + 20, today - 5 * DAY);
  // Captured today (a clock ahead), synced on a sealed day: sealed, yet newer than most unsealed rows.
  await insert('ahead', today - 2 * DAY + 3600_000 + 30, today + 2 * 3600_000);
  await insert('other-org', today - 2 * DAY + 3600_000, today - 2 * DAY, { machine: 'other' });

  const owner = fx.keys.ownerA;
  const request = (filter: Partial<Filter>, limit: number, last: string, sortOrder: Order, countOnly = false) =>
    ({ dataRequest: { filter: emptyFilter(filter), limit, last, sortOrder }, countOnly, includeInternalData: false }) as TabularDataByFilterRequest;
  const walk = async (principal: KeyPrincipal, filter: Partial<Filter>, limit: number, sortOrder: Order) => {
    const seen: string[] = [];
    let last = '';
    for (let pages = 0; pages < 100; pages++) {
      const res = await tabularDataByFilter(store, principal, request(filter, limit, last, sortOrder));
      seen.push(...res.data.map((d) => idOf(d.data)));
      if (res.data.length < limit) return seen;
      last = res.last;
    }
    throw new Error('pages did not end');
  };
  const rover = fx.machines.rover;
  const source = { partId: rover.part_id, resourceName: 'thermo', resourceSubtype: 'rdk:component:sensor', methodName: 'Readings' };
  const everything = async () => {
    const out: Record<string, unknown> = {};
    for (const [name, filter] of [
      ['all', {}],
      ['imu', { componentName: 'imu' }],
      ['arm', { robotName: 'arm' }],
    ] as const) {
      for (const limit of [1, 3, 50]) {
        for (const order of [Order.ORDER_ASCENDING, Order.ORDER_DESCENDING])
          out[`${name} ${limit} ${order === Order.ORDER_ASCENDING ? 'asc' : 'desc'}`] = await walk(owner, filter, limit, order);
      }
      const count = await tabularDataByFilter(store, owner, request(filter, 0, '', Order.ORDER_UNSPECIFIED, true));
      out[`${name} count`] = [count.count, count.totalSizeBytes];
    }
    out.otherOrg = await walk(fx.keys.ownerB, {}, 2, Order.ORDER_DESCENDING);
    const latest = await getLatestTabularData(store, source);
    out.latest = [latest.found, idOf(latest.payload), latest.timeCaptured?.getTime()];
    const exported: string[] = [];
    await exportTabularData(store, { ...source, interval: undefined }, async (p) => void exported.push(idOf(p.payload)), 2);
    out.export = exported;
    return out;
  };

  const seal = async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sealed-pages-'));
    const scaleOut = startScaleOutQuery(store, { dataDir, seal: false });
    t.teardown(async () => {
      await scaleOut.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return scaleOut.sealer.sealClosedDays();
  };
  return { store, fx, days, insert, walk, everything, seal };
}

test('pages, counts, the latest reading and export read sealed days as before they were sealed', async (t) => {
  const { store, days, everything, seal } = await sealedFixture(t);
  const before = await everything();
  t.is((before['all 50 asc'] as string[]).length, 26);
  t.deepEqual((before['all 50 desc'] as string[]).slice(0, 2), ['ahead', 'd2-5']);
  t.is((before['all 50 asc'] as string[])[0], 'late');

  const sealed = await seal();
  t.deepEqual(
    sealed.map((d) => d.day.getTime()),
    [days[0], days[1]],
  );
  const left = await store.query('SELECT count(*) AS n FROM tabular_data');
  t.is(left[0].n, 9n, "only today's rows are still in PostgreSQL");

  t.deepEqual(await everything(), before);
});

test('DeleteTabularData deletes sealed rows too: by scope and age, rewriting or dropping their segments', async (t) => {
  const { store, fx, days, insert, walk, seal } = await sealedFixture(t);
  // Captured ten days ago, synced on the oldest sealed day.
  await insert('old-sealed', days[0] + 3600_000 + 40, days[2] - 10 * 86_400_000);
  const all = await walk(fx.keys.ownerA, {}, 50, Order.ORDER_ASCENDING);
  t.is(all.length, 27);
  t.is((await seal()).length, 2);
  const segments = async () => (await store.query('SELECT content_hash FROM tabular_segments ORDER BY content_hash')).map((r) => String(r.content_hash));
  const first = await segments();
  t.is(first.length, 3, 'two days of org A, one of org B');

  // By age: only the one sealed row captured before it goes, its segment rewritten without it.
  t.is(await deleteTabularData(store, fx.keys.ownerA, 7), 1);
  const afterAge = await walk(fx.keys.ownerA, {}, 50, Order.ORDER_ASCENDING);
  t.deepEqual(
    afterAge,
    all.filter((id) => id !== 'old-sealed'),
  );
  t.not((await segments()).join(), first.join());

  // By a location key's scope: the arm's rows (unsealed and sealed) go, the rover's stay.
  const armRows = await walk(fx.keys.ownerA, { robotName: 'arm' }, 50, Order.ORDER_ASCENDING);
  t.is(armRows.length, 6);
  t.is(await deleteTabularData(store, fx.keys.ownerField, 0), 6);
  t.deepEqual(
    await walk(fx.keys.ownerA, {}, 50, Order.ORDER_ASCENDING),
    afterAge.filter((id) => !armRows.includes(id)),
  );

  // Everything of organization A: its segments leave the manifest; organization B keeps its own.
  t.is(await deleteTabularData(store, fx.keys.ownerA, 0), afterAge.length - armRows.length);
  t.deepEqual(await walk(fx.keys.ownerA, {}, 50, Order.ORDER_ASCENDING), []);
  t.is((await segments()).length, 1);
  t.deepEqual(await walk(fx.keys.ownerB, {}, 50, Order.ORDER_ASCENDING), ['other-org']);
  const count = await tabularDataByFilter(store, fx.keys.ownerA, {
    dataRequest: { filter: undefined, limit: 0, last: '', sortOrder: Order.ORDER_UNSPECIFIED },
    countOnly: true,
    includeInternalData: true,
  } as TabularDataByFilterRequest);
  t.is(count.count, 0);
});

test('a day sealed between the manifest read and the unsealed rows read is not lost: the read is made again', async (t) => {
  const { store, fx, seal } = await sealedFixture(t);
  const count = async () => Number((await store.query('SELECT count(*) AS n FROM tabular_data WHERE organization_id = ?', [fx.orgA]))[0].n);
  const all = await count();
  let sealedMidway = false;
  const total = await readReadings(
    store,
    fx.orgA,
    async () => {
      // The sealer commits after the manifest was read (empty) and before the unsealed rows are.
      if (!sealedMidway) {
        sealedMidway = true;
        t.is((await seal()).length, 2);
      }
      return count();
    },
    async (files, tail) => tail + Number((await files.query((from) => `SELECT count(*) AS n FROM ${from} WHERE organization_id = ?`, [fx.orgA]))[0].n),
  );
  t.true(sealedMidway);
  t.is(total, all);
});
