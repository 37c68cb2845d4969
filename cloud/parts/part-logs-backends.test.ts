// Part logs (part-logs.ts) on both TabularStore backends: the embedded DuckDB Store (logs.duckdb) and
// PostgreSQL (logs.part_logs, pg-part-logs.ts). Writes, reads with every filter, pages, limits,
// retention, tails, and on PostgreSQL a tail in one process following what another process writes.
import test, { type ExecutionContext } from 'ava';
import { storeChannels } from '../store/pg-notify.js';
import { PgStore } from '../store/pg-store.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { LOG_RETENTION_MS, MAX_LOG_PAGE, PartLogs, type StoredLogEntry } from './part-logs.js';
import { pgLogFollower, type FollowOptions } from './pg-part-logs.js';

const backends = tabularBackends(test);
const [, postgres] = backends;

const DAY = 24 * 3600 * 1000;
const base = Date.parse('2026-03-01T00:00:00Z');
const entry = (i: number, level: string, message: string, logger = `platform.s${i % 2}`): StoredLogEntry => ({
  time: new Date(base - 60_000 + i * 1000),
  level,
  loggerName: logger,
  message,
  fields: { i, nested: { ok: true } },
});
const messages = (entries: readonly StoredLogEntry[]) => entries.map((e) => e.message);

/** Waits until check() holds, polling; fails naming what after 30 s. */
async function eventually(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of backends) {
  test(`${backend.name}: entries are read back newest first, by level, window, text, and in pages`, async (t) => {
    const store = await backend.open(t);
    const logs = await PartLogs.open(store, () => base);
    const batch = [
      entry(0, 'info', 'started'),
      entry(1, 'warn', 'Battery low'),
      entry(2, 'error', 'sensor failed'),
      entry(3, 'info', 'battery charged', 'platform.BATTERY'),
      entry(4, 'debug', 'tick'),
      entry(4, 'info', 'same time, later seq'),
    ];
    t.is(await logs.append('p1', batch, 'org-a'), 6);
    t.is(await logs.append('p2', [entry(5, 'error', 'other part')], 'org-b'), 1);

    const all = await logs.query('p1', {});
    t.deepEqual(messages(all.logs), ['same time, later seq', 'tick', 'battery charged', 'sensor failed', 'Battery low', 'started']);
    t.is(all.nextPageToken, '');
    t.deepEqual(all.logs[5], batch[0], 'time, level, logger, message and fields come back as stored');
    t.deepEqual(messages((await logs.query('p1', { levels: ['ERROR', 'warn', 'error'] })).logs), ['sensor failed', 'Battery low']);
    // Text: any case, in the message or the logger name, no pattern characters.
    t.deepEqual(messages((await logs.query('p1', { filter: 'BATTERY' })).logs), ['battery charged', 'Battery low']);
    t.deepEqual(messages((await logs.query('p1', { filter: 'S1' })).logs), ['Battery low']);
    t.deepEqual(messages((await logs.query('p1', { filter: '%' })).logs), []);
    t.deepEqual(messages((await logs.query('p1', { start: batch[1].time, end: batch[3].time })).logs), ['sensor failed', 'Battery low']);

    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await logs.query('p1', { limit: 4, pageToken, levels: [] });
      seen.push(...messages(page.logs));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken);
    t.is(pages, 2);
    t.deepEqual(seen, messages(all.logs), 'pages neither skip nor repeat entries of the same time');
    // A page boundary between two entries of one time.
    const first = await logs.query('p1', { limit: 1 });
    t.deepEqual(messages((await logs.query('p1', { limit: 1, pageToken: first.nextPageToken })).logs), ['tick']);

    await t.throwsAsync(logs.query('p1', { levels: ['loud'] }), { message: /levels\[0\] "loud": must be one of debug, info, warn, error/ });
    await t.throwsAsync(logs.query('p1', { limit: MAX_LOG_PAGE + 1 }), { message: new RegExp(`limit ${MAX_LOG_PAGE + 1}: must be at most ${MAX_LOG_PAGE}`) });
    for (const forged of ['nope', Buffer.from(JSON.stringify({ t: 1, s: '99999999999999999999' })).toString('base64url')]) {
      await t.throwsAsync(logs.query('p1', { pageToken: forged }), { message: /page_token: must be the next_page_token of a previous page/ });
    }
    // A token of a time far outside every stored one is still a token: nothing before it, no error.
    const far = Buffer.from(JSON.stringify({ t: -9e15, s: '1' })).toString('base64url');
    t.deepEqual((await logs.query('p1', { pageToken: far })).logs, []);
  });

  test(`${backend.name}: retention: entries past 30 days are refused, hidden, and swept`, async (t) => {
    const store = await backend.open(t);
    let now = base;
    const logs = await PartLogs.open(store, () => now);
    const at = (ms: number, message: string): StoredLogEntry => ({ time: new Date(ms), level: 'info', loggerName: 'l', message, fields: {} });
    t.is(await logs.append('p1', [at(now - 31 * DAY, 'too old'), at(now - 29 * DAY, 'old'), at(now - DAY, 'recent')]), 2);
    t.is(await logs.append('p1', [at(now - 31 * DAY, 'too old')]), 0);
    t.deepEqual(messages((await logs.query('p1', {})).logs), ['recent', 'old']);
    now += 2 * DAY;
    t.deepEqual(messages((await logs.query('p1', {})).logs), ['recent']);
    t.is(LOG_RETENTION_MS, 30 * DAY);
    t.is(await logs.sweep(), 1);
    t.is((await store.query('SELECT count(*) AS n FROM logs.part_logs'))[0].n, 1n);
  });

  test(`${backend.name}: a tail gets the entries of its part stored after it began, in order, until stopped`, async (t) => {
    const store = await backend.open(t);
    const logs = await PartLogs.open(store, () => base);
    await logs.append('p1', [entry(0, 'info', 'before the tail')]);
    const got: string[] = [];
    const stop = await logs.follow('p1', (entries) => got.push(...messages(entries)));
    await logs.append('p2', [entry(1, 'info', 'another part')]);
    for (let b = 0; b < 5; b++) await logs.append('p1', [entry(b, 'info', `batch ${b} a`), entry(b, 'info', `batch ${b} b`)]);
    await eventually('ten entries', () => got.length >= 10);
    t.deepEqual(
      got,
      [0, 1, 2, 3, 4].flatMap((b) => [`batch ${b} a`, `batch ${b} b`]),
    );
    stop();
    await logs.append('p1', [entry(9, 'info', 'after the tail')]);
    await logs.append('p1', [entry(9, 'info', 'and again')]);
    // The stopped tail hears nothing more (on PostgreSQL: several polls later).
    await new Promise((r) => setTimeout(r, 600));
    t.is(got.length, 10);
  });
}

// Serial: postgres.lastUrl names the database opened last, and serial tests run before the others.
test.serial('postgres: a tail in one process follows what another process writes, batches of one part in commit order', async (t) => {
  const a = await postgres.open(t);
  const b = await PgStore.open(postgres.lastUrl!, { poolSize: 4 });
  t.teardown(() => b.close());
  const writer = await PartLogs.open(a, () => base);
  const reader = await PartLogs.open(b, () => base);
  const got: StoredLogEntry[] = [];
  const stop = await reader.follow('p1', (entries) => got.push(...entries));
  t.teardown(stop);
  // Two writers in two processes at once, many batches each: every entry arrives once, each writer's in its order.
  const writers = [writer, await PartLogs.open(b, () => base)];
  await Promise.all(
    writers.map(async (w, k) => {
      for (let i = 0; i < 20; i++) await w.append('p1', [entry(i, 'info', `w${k} ${i} a`), entry(i, 'info', `w${k} ${i} b`)], `org-${k}`);
    }),
  );
  await eventually('80 entries', () => got.length >= 80);
  await new Promise((r) => setTimeout(r, 500));
  t.is(got.length, 80);
  for (const k of [0, 1]) {
    t.deepEqual(
      messages(got).filter((m) => m.startsWith(`w${k} `)),
      Array.from({ length: 20 }, (_, i) => [`w${k} ${i} a`, `w${k} ${i} b`]).flat(),
    );
  }
  t.deepEqual(got[0].fields, { i: 0, nested: { ok: true } });
  // Both processes read the same entries.
  t.deepEqual(messages((await reader.query('p1', { limit: 80 })).logs), messages((await writer.query('p1', { limit: 80 })).logs));
});

/** Store A writes, store B (another process's pool and LISTEN connection on the same database) tails p1. */
async function twoProcesses(t: ExecutionContext, follow: FollowOptions) {
  const a = await postgres.open(t);
  const b = await PgStore.open(postgres.lastUrl!, { poolSize: 4 });
  t.teardown(() => b.close());
  // Made before anything follows on B, so that these options are B's.
  pgLogFollower(b, follow);
  const writer = await PartLogs.open(a, () => base);
  const reader = await PartLogs.open(b, () => base);
  const got: string[] = [];
  t.teardown(await reader.follow('p1', (entries) => got.push(...messages(entries))));
  return { b, writer, got };
}

test.serial("postgres: a tail wakes on the notification of another process's write, not on the slow poll", async (t) => {
  // The slow poll is ten minutes away: only the NOTIFY after A's commit can bring the entries within the wait.
  const { b, writer, got } = await twoProcesses(t, { fallbackPollMs: 600_000 });
  // B listens: the catch-up read of its first connection is done, so it cannot be what delivers below.
  await storeChannels(b).ready();
  await writer.append('p2', [entry(0, 'info', 'another part')]);
  for (let i = 0; i < 3; i++) await writer.append('p1', [entry(i, 'info', `n${i} a`), entry(i, 'info', `n${i} b`)]);
  await eventually('six entries through the notification', () => got.length >= 6);
  t.deepEqual(got, ['n0 a', 'n0 b', 'n1 a', 'n1 b', 'n2 a', 'n2 b']);
});

test.serial('postgres: an entry whose NOTIFY was lost is read when the listening connection comes back', async (t) => {
  const { b, got } = await twoProcesses(t, { fallbackPollMs: 600_000 });
  await storeChannels(b).ready();
  // Committed with no NOTIFY, as by a writer killed between its commit and the NOTIFY.
  await b.execute(
    `INSERT INTO logs.part_logs (part_id, time, seq, level, logger_name, message, fields)
     VALUES ('p1', ?, nextval('logs.part_logs_seq'), 'info', 'l', 'unannounced', '{}')`,
    [new Date(base)],
  );
  // B's listening connection drops: once it is back, every followed part is read (the resync).
  const back = new Promise<void>((resolve) => storeChannels(b).onResync(() => resolve()));
  await b.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'platform-cloud listen' AND datname = current_database()");
  await back;
  await eventually('the unannounced entry', () => got.length >= 1);
  t.deepEqual(got, ['unannounced']);
});

test.serial('postgres: with notifications off, the slow poll still delivers what another process writes', async (t) => {
  const { writer, got } = await twoProcesses(t, { notifications: false, fallbackPollMs: 300 });
  for (let i = 0; i < 3; i++) await writer.append('p1', [entry(i, 'info', `p${i}`)]);
  await eventually('three entries through the poll', () => got.length >= 3);
  await writer.append('p1', [entry(3, 'info', 'p3')]);
  await eventually('the fourth entry through the poll', () => got.length >= 4);
  t.deepEqual(got, ['p0', 'p1', 'p2', 'p3']);
});

test('postgres: a 10,000-entry batch is one statement within the parameter limit, read back whole', async (t) => {
  const store = await postgres.open(t);
  const logs = await PartLogs.open(store, () => base);
  const many = Array.from({ length: 10_000 }, (_, i) => ({ ...entry(i % 50, 'info', `m${i}`), fields: { i } }));
  t.is(await logs.append('p1', many), 10_000);
  const page = await logs.query('p1', { limit: MAX_LOG_PAGE });
  t.is(page.logs.length, 10_000);
  t.is(page.nextPageToken, '');
  t.is((await store.query('SELECT count(DISTINCT seq) AS n FROM logs.part_logs'))[0].n, 10_000n);
});
