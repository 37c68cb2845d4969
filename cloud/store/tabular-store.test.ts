// The TabularStore seam (tabular.ts): the same statements give the same JS values and the same
// transaction behaviour on the embedded DuckDB Store and on PgStore.
import test from 'ava';
import { tabularBackends } from '../testing/tabular-backends.js';
import { ensurePartConfigTables } from '../parts/part-configs.js';
import { listHas, listWith, listWithout } from './list-sql.js';
import type { SqlSession } from './tabular.js';

const backends = tabularBackends(test);

for (const backend of backends) {
  test(`${backend.name}: values go in and come out as the same JS types`, async (t) => {
    const store = await backend.open(t);
    const created = new Date('2026-11-27T01:02:03.456Z');
    await store.execute('INSERT INTO dataset_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS VARCHAR[]))', [
      'ds',
      3,
      'org',
      created,
      0.7,
      0.2,
      0.1,
      9007199254740993n,
      10,
      7,
      2,
      1,
      ['cat', 'dog, "big"', '?', 'back\\slash {x}', 'NULL', ''],
    ]);
    const [v] = await store.query('SELECT * FROM dataset_versions WHERE dataset_id = ?', ['ds']);
    t.deepEqual(v, {
      dataset_id: 'ds',
      version: 3,
      organization_id: 'org',
      time_created: created,
      split_train: 0.7,
      split_valid: 0.2,
      split_test: 0.1,
      split_seed: 9007199254740993n,
      image_count: 10,
      train_count: 7,
      valid_count: 2,
      test_count: 1,
      labels: ['cat', 'dog, "big"', '?', 'back\\slash {x}', 'NULL', ''],
    });
    const boxes = '{"b":[1,2.5],"a":null}';
    await store.execute(
      "INSERT INTO dataset_version_members VALUES (?, 1, 0, 'bin', 'train', CAST(? AS VARCHAR[]), ?, 4, 3, '.png', 'image/png', 'k', 5, NULL, NULL, NULL)",
      ['ds', [], boxes],
    );
    const [m] = await store.query('SELECT tags, boxes, time_requested, part_id FROM dataset_version_members');
    t.deepEqual(m, { tags: [], boxes, time_requested: null, part_id: null }, 'JSON comes back as the text stored, an empty list as []');
    const [c] = await store.query('SELECT count(*) AS n, sum(image_count) AS s, max(time_created) AS latest FROM dataset_versions');
    t.deepEqual(c, { n: 1n, s: 10n, latest: created });
  });

  test(`${backend.name}: list columns: add (each once, sorted by bytes), remove, contains, overlap, IN a list parameter`, async (t) => {
    const store = await backend.open(t);
    const d = store.dialect;
    const insert = (id: string, tags: string[] | null) =>
      store.execute(
        "INSERT INTO binary_data (seq, binary_data_id, organization_id, tags, dataset_ids, blob_key) VALUES (1, ?, 'org', CAST(? AS VARCHAR[]), NULL, 'k')",
        [id, tags === null ? null : tags],
      );
    await insert('a', ['b', 'Z', 'a']);
    await insert('b', null);
    await insert('c', []);
    const tagsOf = async () =>
      Object.fromEntries((await store.query('SELECT binary_data_id, tags FROM binary_data ORDER BY 1')).map((r) => [r.binary_data_id, r.tags]));
    t.is(await store.execute(`UPDATE binary_data SET tags = ${listWith(d, 'tags')}`, ['b']), 3);
    t.deepEqual(await tagsOf(), { a: ['Z', 'a', 'b'], b: ['b'], c: ['b'] }, 'an element already there is not doubled; a NULL list gets one');
    await store.execute(`UPDATE binary_data SET tags = ${listWithout(d, 'tags')} WHERE binary_data_id IN (SELECT unnest(CAST(? AS VARCHAR[])))`, [
      'b',
      ['a', 'c'],
    ]);
    t.deepEqual(await tagsOf(), { a: ['Z', 'a'], b: ['b'], c: [] });
    const ids = async (where: string, params: (string | string[])[]) =>
      (await store.query(`SELECT binary_data_id FROM binary_data WHERE ${where} ORDER BY 1`, params)).map((r) => r.binary_data_id);
    t.deepEqual(await ids(listHas(d, 'tags'), ['b']), ['b']);
    t.deepEqual(await ids('tags && CAST(? AS VARCHAR[])', [['Z', 'b']]), ['a', 'b']);
    t.deepEqual(await ids('binary_data_id IN (SELECT unnest(CAST(? AS VARCHAR[])))', [[]]), [], 'an empty list parameter');
    t.deepEqual(await ids(listHas(d, 'dataset_ids'), ['x']), [], 'a NULL list holds nothing');
  });

  test(`${backend.name}: ? and $n parameters; a ? inside a literal or a comment is text`, async (t) => {
    const store = await backend.open(t);
    const [q] = await store.query(`SELECT CAST(? AS VARCHAR) AS a, '?''?' AS q, CAST(? AS VARCHAR) AS b -- what?\n`, ['x', 'y']);
    t.deepEqual(q, { a: 'x', q: "?'?", b: 'y' });
    const [n] = await store.query('SELECT CAST($2 AS VARCHAR) AS a, CAST($1 AS VARCHAR) AS b', ['one', 'two']);
    t.deepEqual(n, { a: 'two', b: 'one' });
    t.is(await store.execute('UPDATE organizations SET name = ? WHERE id = ?', ['n', 'none']), 0);
  });

  test(`${backend.name}: a transaction that throws leaves nothing; one that returns commits every statement`, async (t) => {
    const store = await backend.open(t);
    const now = new Date();
    await t.throwsAsync(
      store.transact(async (tx) => {
        await tx.execute('INSERT INTO organizations VALUES (?, ?, ?)', ['o1', 'first', now]);
        t.is((await tx.query('SELECT name FROM organizations')).length, 1, 'a transaction sees its own writes');
        throw new Error('changed my mind');
      }),
      { message: 'changed my mind' },
    );
    t.deepEqual(await store.query('SELECT * FROM organizations'), []);
    const value = await store.transact(async (tx) => {
      await tx.execute('INSERT INTO organizations VALUES (?, ?, ?)', ['o1', 'first', now]);
      return tx.execute('INSERT INTO organizations VALUES (?, ?, ?), (?, ?, ?)', ['o2', 'second', now, 'o3', 'third', now]);
    });
    t.is(value, 2);
    t.deepEqual(
      (await store.query('SELECT id FROM organizations ORDER BY id')).map((r) => r.id),
      ['o1', 'o2', 'o3'],
    );
  });

  test(`${backend.name}: read-then-write transactions run as if one at a time (no revision handed out twice)`, async (t) => {
    const store = await backend.open(t);
    await ensurePartConfigTables(store);
    const next = () =>
      store.transact(async (tx) => {
        const [row] = await tx.query('SELECT coalesce(max(revision), 0) AS r FROM part_configs WHERE part_id = ?', ['p']);
        const revision = Number(row.r) + 1;
        await tx.execute('INSERT INTO part_configs VALUES (?, ?, ?, ?, ?)', ['p', revision, '{}', 'test', new Date()]);
        return revision;
      });
    const revisions = await Promise.all(Array.from({ length: 16 }, next));
    t.deepEqual(
      [...revisions].sort((a, b) => a - b),
      Array.from({ length: 16 }, (_, i) => i + 1),
    );
    t.is((await store.query('SELECT DISTINCT revision FROM part_configs')).length, 16);
  });
}

test('postgres: a transaction that loses a serialization conflict is run again and then commits', async (t) => {
  const store = await backends[1].open(t);
  let runsOfA = 0;
  let readByA!: () => void;
  const aHasRead = new Promise<void>((resolve) => (readByA = resolve));
  let bDone!: () => void;
  const bHasCommitted = new Promise<void>((resolve) => (bDone = resolve));
  const insertNext = async (tx: SqlSession) => {
    const [row] = await tx.query('SELECT coalesce(max(revision), 0) AS r FROM part_configs WHERE part_id = ?', ['p']);
    const revision = Number(row.r) + 1;
    await tx.execute('INSERT INTO part_configs VALUES (?, ?, ?, ?, ?)', ['p', revision, '{}', 'test', new Date()]);
    return revision;
  };
  const a = store.transact(async (tx) => {
    runsOfA++;
    const [row] = await tx.query('SELECT coalesce(max(revision), 0) AS r FROM part_configs WHERE part_id = ?', ['p']);
    if (runsOfA === 1) {
      readByA();
      await bHasCommitted; // B commits revision 1 after A read "none yet".
    }
    await tx.execute('INSERT INTO part_configs VALUES (?, ?, ?, ?, ?)', ['p', Number(row.r) + 1, '{}', 'a', new Date()]);
    return Number(row.r) + 1;
  });
  await aHasRead;
  const b = await store.transact(insertNext);
  bDone();
  t.is(b, 1);
  t.is(await a, 2, 'A ran again after the conflict and saw B');
  t.is(runsOfA, 2);

  const once = await backends[1].open(t, { maxAttempts: 1 });
  let readOnce!: () => void;
  const onceRead = new Promise<void>((resolve) => (readOnce = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const c = once.transact(async (tx) => {
    const [row] = await tx.query('SELECT coalesce(max(revision), 0) AS r FROM part_configs WHERE part_id = ?', ['p']);
    readOnce();
    await released;
    await tx.execute('INSERT INTO part_configs VALUES (?, ?, ?, ?, ?)', ['p', Number(row.r) + 1, '{}', 'c', new Date()]);
  });
  await onceRead;
  await once.transact(insertNext);
  release();
  const err = await t.throwsAsync<Error & { code?: string }>(c);
  t.is(err.code, '40001', 'with one attempt allowed the conflict reaches the caller');
});
