// The PostgreSQL endpoint's limits (cloud-hardening): connection cap, handshake and idle timeouts, message
// size, login back-off through a LoginGate, and TLS on SSLRequest (psql sslmode=require).
import test from 'ava';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { MemoryGuard } from '../memory-guard.js';
import { resourceExhausted } from '../../../core/serving/status-error.js';
import type { LoginGate } from './pg-endpoint.js';
import { PASSWORD_A, PASSWORD_B, startTestEndpoint, USER_A, USER_B } from './test-endpoint.js';

const run = promisify(execFile);

async function psql(port: number, user: string, password: string, sql: string, sslmode = 'disable') {
  try {
    const { stdout } = await run('psql', [`postgresql://${user}@127.0.0.1:${port}/sensorData?sslmode=${sslmode}`, '-X', '-A', '-t', '-c', sql], {
      env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '20' },
    });
    return { ok: true, out: stdout.trim() };
  } catch (err) {
    return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
  }
}

/**
 * A small query under the 300 ms timeout: the one a session runs after one of its statements was stopped,
 * or the small first run of a statement. On a loaded machine even that can pass 300 ms and be stopped too
 * (seen at load 17 and 26); the rules under test are that the session goes on and what the statement does
 * next, so only 57014 is retried, a few times, and any other error fails.
 */
async function afterTimeout(client: pg.Client, query: string | pg.QueryConfig) {
  for (let attempt = 1; ; attempt++) {
    try {
      return typeof query === 'string' ? await client.query(query) : await client.query(query);
    } catch (err) {
      if ((err as { code?: string }).code !== '57014' || attempt === 5) throw err;
    }
  }
}

/** Resolves when the socket closes, whatever error (ECONNRESET) came first. */
const closed = (s: Socket | pg.Client) => new Promise<void>((resolve) => s.once(s instanceof pg.Client ? 'end' : 'close', () => resolve()));

const rawSocket = async (port: number): Promise<Socket> => {
  const s = connect(port, '127.0.0.1');
  await once(s, 'connect');
  s.on('error', () => undefined);
  return s;
};

test('connections over the cap are refused with 53300 naming the limit', async (t) => {
  const te = await startTestEndpoint({ limits: { maxConnections: 2 } });
  // Logged-in sessions hold their places (a connection that has not logged in may be evicted to make room,
  // see pg-lockout.test.ts).
  const held = [0, 1].map(() => new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_B, password: PASSWORD_B, database: 'sensorData' }));
  try {
    for (const c of held) await c.connect();
    const r = await psql(te.port, USER_A, PASSWORD_A, 'SELECT 1');
    t.false(r.ok);
    t.regex(r.out, /too many clients already \(the 2-connection limit, PLATFORM_QUERY_PG_MAX_CONNECTIONS\)/);
  } finally {
    for (const c of held) await c.end().catch(() => undefined);
    await te.close();
  }
});

test('a connection that does not finish its handshake is closed', async (t) => {
  const te = await startTestEndpoint({ limits: { handshakeTimeoutMs: 300 } });
  try {
    const s = await rawSocket(te.port);
    let serverEnded = false;
    s.on('end', () => (serverEnded = true));
    await closed(s);
    t.true(serverEnded, 'the server, not the client, ended the connection');
  } finally {
    await te.close();
  }
});

test('an idle authenticated connection is closed after the idle timeout', async (t) => {
  const te = await startTestEndpoint({ limits: { idleTimeoutMs: 500 } });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await closed(client);
    await t.throwsAsync(client.query('SELECT 1'), { message: /not queryable|terminated|ended/i }, 'the server closed the idle connection');
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test('a message over the size limit ends the connection with 54000; a huge declared length is cut off early', async (t) => {
  const te = await startTestEndpoint({ limits: { maxMessageBytes: 4096 } });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const err = (await t.throwsAsync(client.query(`SELECT '${'x'.repeat(10_000)}' AS big`))) as Error & { code?: string };
    t.is(err.code, '54000');
    t.regex(err.message, /over the 4096-byte limit/);
    // A start-up packet that claims 64 MB: the endpoint stops reading long before that.
    const s = await rawSocket(te.port);
    const head = Buffer.alloc(8);
    head.writeInt32BE(64 * 1024 * 1024, 0);
    head.writeInt32BE(196608, 4);
    s.write(head);
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    let sent = 0;
    const gone = closed(s);
    while (!s.destroyed && sent < 8 * 1024 * 1024) {
      if (!s.write(chunk)) await Promise.race([new Promise((r) => s.once('drain', r)), gone]);
      sent += chunk.length;
    }
    await gone;
    t.true(sent < 8 * 1024 * 1024, `closed after ${sent} bytes`);
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test('the login gate is consulted around password checks and its refusal is reported', async (t) => {
  const failures = new Map<string, number>();
  const log: string[] = [];
  const gate: LoginGate = {
    check(keyId, address) {
      if ((failures.get(keyId) ?? 0) >= 3) throw resourceExhausted(`login: too many failed attempts for ${keyId} from ${address}; try again later`);
    },
    failed(keyId) {
      failures.set(keyId, (failures.get(keyId) ?? 0) + 1);
      log.push(`failed ${keyId}`);
    },
    succeeded(keyId) {
      failures.delete(keyId);
      log.push(`succeeded ${keyId}`);
    },
  };
  const te = await startTestEndpoint({ loginGate: gate });
  try {
    t.true((await psql(te.port, USER_A, PASSWORD_A, 'SELECT 1')).ok);
    for (let i = 0; i < 3; i++) t.regex((await psql(te.port, USER_A, 'wrong password!', 'SELECT 1')).out, /password authentication failed/);
    const blocked = await psql(te.port, USER_A, PASSWORD_A, 'SELECT 1');
    t.false(blocked.ok, 'even the right password is refused while backed off');
    t.regex(blocked.out, /too many failed attempts for db-user-org-a from 127\.0\.0\.1/);
    t.true((await psql(te.port, USER_B, PASSWORD_B, 'SELECT 1')).ok, 'other users are not affected');
    t.deepEqual(log, ['succeeded db-user-org-a', 'failed db-user-org-a', 'failed db-user-org-a', 'failed db-user-org-a', 'succeeded db-user-org-b']);
  } finally {
    await te.close();
  }
});

test('with certificates configured, SSLRequest gets TLS (psql sslmode=require) and plaintext is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pg-tls-'));
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    const te = await startTestEndpoint({ tls: { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) } });
    try {
      const r = await psql(te.port, USER_A, PASSWORD_A, 'SELECT count(*) FROM readings', 'require');
      t.true(r.ok, r.out);
      t.is(r.out, '3');
      const info = await psql(te.port, USER_A, PASSWORD_A, '\\conninfo', 'require');
      t.regex(info.out, /SSL connection \(protocol: TLSv1\.[23]/);
      const plain = await psql(te.port, USER_A, PASSWORD_A, 'SELECT 1', 'disable');
      t.false(plain.ok);
      t.regex(plain.out, /SSL connection is required/);
    } finally {
      await te.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the statement timeout interrupts DuckDB and answers 57014 naming the limit; the session goes on', async (t) => {
  const te = await startTestEndpoint({}, { timeoutMs: 300 });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  try {
    await client.connect();
    const err = (await t.throwsAsync(client.query('SELECT count(*) FROM range(1000000000000) a WHERE a.range % $1 = 0', [7]))) as Error & { code?: string };
    t.is(err.code, '57014');
    t.regex(err.message, /statement timeout \(the 300 ms time limit, PLATFORM_QUERY_TIMEOUT_MS\)/);
    t.is((await afterTimeout(client, 'SELECT count(*) AS n FROM readings')).rows[0].n, '3');
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test('a statement that ran small and fast is still interrupted by the statement timeout when it next runs materialized', async (t) => {
  const te = await startTestEndpoint({}, { timeoutMs: 300 });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  const sevens = (upTo: number) => ({ name: 'sevens', text: 'SELECT count(*) AS n FROM range($1::BIGINT) a WHERE a.range % 7 = 0', values: [upTo] });
  try {
    await client.connect();
    t.is((await afterTimeout(client, sevens(10))).rows[0].n, '2'); // one row: the next run is materialized
    const err = (await t.throwsAsync(client.query(sevens(1_000_000_000_000)))) as Error & { code?: string };
    t.is(err.code, '57014');
    t.regex(err.message, /statement timeout \(the 300 ms time limit, PLATFORM_QUERY_TIMEOUT_MS\)/);
    t.is((await afterTimeout(client, sevens(15))).rows[0].n, '3');
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test.serial('a statement whose result has grown is never held whole: 3M rows stream under a memory guard 180 MB above the process', async (t) => {
  // Materialized, these rows would take about 330 MB; streamed, the endpoint holds a chunk at a time. The
  // statement's last result was small, so its next run is the bounded (LIMIT 2049) materialized one, which
  // finds the result large and streams it instead. Serial: no other test of this file grows the process.
  const memory = new MemoryGuard(process.memoryUsage.rss() + 180 * 2 ** 20);
  const te = await startTestEndpoint({}, { memory, timeoutMs: 120_000 });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  // The client counts the rows instead of keeping them, so that only the endpoint's memory grows.
  class Counting extends pg.Query {
    rowsSeen = 0;
    handleDataRow(): void {
      this.rowsSeen++;
    }
  }
  const wide = (thousands: number) =>
    new Promise<number>((resolve, reject) => {
      const q = new Counting({
        name: 'wide',
        text: 'SELECT md5(a.i::VARCHAR) || md5(b.i::VARCHAR) AS s FROM range($1::BIGINT) a(i), range(1000) b(i)',
        values: [thousands],
      });
      q.on('end', () => resolve(q.rowsSeen));
      q.on('error', reject);
      void client.query(q);
    });
  try {
    await client.connect();
    t.is(await wide(1), 1000); // small: the next run is materialized
    t.is(await wide(3000), 3_000_000);
    t.is(await wide(1), 1000);
    t.is(memory.running, 0);
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test('the memory guard interrupts a statement that outgrows the service, with 53200 naming the limit', async (t) => {
  // Sorting 20M rows of 64-byte strings holds them all; the guard is 400 MB above what the process holds now.
  const memory = new MemoryGuard(process.memoryUsage.rss() + 400 * 2 ** 20);
  const te = await startTestEndpoint({}, { memory, timeoutMs: 60_000 });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  try {
    await client.connect();
    const sorted = 'SELECT md5(a.i::VARCHAR) || md5(b.i::VARCHAR) AS s FROM range($1::BIGINT) a(i), range(1000) b(i) ORDER BY s';
    const err = (await t.throwsAsync(client.query(sorted, [20_000]))) as Error & { code?: string };
    t.is(err.code, '53200');
    t.regex(err.message, /out of memory: the service's memory passed its \d+ MiB limit \(PLATFORM_QUERY_RSS_LIMIT_MB\) while this statement ran/);
    t.is(memory.running, 0);
    // The connection survives. (A data query now could be stopped too, until the allocator gives the sort's
    // memory back and RSS is under the limit again; a session statement needs no DuckDB work.)
    t.is((await client.query('SHOW application_name')).rows.length, 1);
  } finally {
    await client.end().catch(() => undefined);
    await te.close();
  }
});

test.serial('after the process RSS was inflated past the limit, a small statement still runs, and a runaway one is still stopped with 53200', async (t) => {
  // Issue 27, finding 8, with real RSS: 200 MB of touched pages stay resident while the test holds them, and
  // the guard's limit is 100 MB below what the process holds then, so RSS is over it before any query runs.
  // Serial: the ballast must not push other tests' guards over, nor their queries past a short time limit.
  const ballast = Buffer.alloc(200 * 2 ** 20, 1);
  const memory = new MemoryGuard(process.memoryUsage.rss() - 100 * 2 ** 20);
  const te = await startTestEndpoint({}, { memory, timeoutMs: 60_000 });
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  try {
    await client.connect();
    t.true(process.memoryUsage.rss() > memory.limitBytes, 'the process is over the limit before the queries');
    // Long enough for the guard to sample it many times (it samples every 10 ms), small in memory.
    const small = await client.query('SELECT count(*)::BIGINT AS n FROM range(30000000) a(i) WHERE i % 7 = 0');
    t.is(small.rows[0].n, '4285715');
    t.is((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    const sorted = 'SELECT md5(a.i::VARCHAR) || md5(b.i::VARCHAR) AS s FROM range($1::BIGINT) a(i), range(1000) b(i) ORDER BY s';
    const err = (await t.throwsAsync(client.query(sorted, [20_000]))) as Error & { code?: string };
    t.is(err.code, '53200');
    t.regex(err.message, /having grown the service by at least 64 MiB \(PLATFORM_QUERY_RSS_MIN_GROWTH_MB\)/);
  } finally {
    ballast.fill(0); // keeps the ballast referenced (resident) until here
    await client.end().catch(() => undefined);
    await te.close();
  }
});
