// The PostgreSQL test harness: a server of its own, reachable with a real client, two at once on
// different ports, and nothing left behind after stop.
import test from 'ava';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { startPostgres } from './postgres.js';

test('two PostgreSQL servers start side by side, keep their own data, and stop leaving nothing', async (t) => {
  const [a, b] = await Promise.all([startPostgres(), startPostgres({ max_connections: '20' })]);
  try {
    t.not(a.port, b.port);
    for (const [server, name] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        await client.query('CREATE TABLE t (name text)');
        await client.query('INSERT INTO t VALUES ($1)', [name]);
        t.deepEqual((await client.query('SELECT name FROM t')).rows, [{ name }]);
        const setting = (await client.query(`SELECT current_setting('max_connections') AS v, current_setting('fsync') AS f`)).rows[0];
        t.is(setting.v, name === 'b' ? '20' : '100', 'settings given to startPostgres reach the server');
        t.is(setting.f, 'on', 'the server keeps fsync on');
      } finally {
        await client.end();
      }
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  const client = new pg.Client({ connectionString: a.url, connectionTimeoutMillis: 5000 });
  await t.throwsAsync(client.connect(), undefined, 'a stopped server refuses connections');
  t.false(existsSync(a.dir), 'the data dir is removed');
  t.false(existsSync(b.dir));
});
