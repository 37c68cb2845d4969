// Issue 27, finding 6: one tenant must not lock the others out of the PostgreSQL endpoint. Organisation A
// opens 500 sockets that never send a start-up message (from its own address, 127.0.0.2) and as many
// sessions as it may; organisation B's psql and node-postgres still connect and query, the half-open
// sockets are closed by the handshake timer, and every refusal is 53300 naming its limit and variable.
import test from 'ava';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import { addressGroup, ConnectionSlots, EVICT_STARTUP_AFTER_MS, isRefusal, type ConnectionSlot } from './connection-slots.js';
import { pgLimitsFromEnv } from './pg-endpoint.js';
import { PASSWORD_A, PASSWORD_B, startTestEndpoint, USER_A, USER_B } from './test-endpoint.js';

const run = promisify(execFile);

async function psql(port: number, user: string, password: string, sql: string) {
  try {
    const { stdout } = await run('psql', [`postgresql://${user}@127.0.0.1:${port}/sensorData?sslmode=disable`, '-X', '-A', '-t', '-c', sql], {
      env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '30' },
    });
    return { ok: true, out: stdout.trim() };
  } catch (err) {
    return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
  }
}

interface HalfOpen {
  socket: Socket;
  /** Everything the server sent before the socket closed. */
  received: Buffer[];
  /** True when the server ended the connection (its FIN, or a reset), not this side. */
  closedByServer: Promise<boolean>;
}

/** A socket from `localAddress` that connects and then sends nothing at all. */
async function halfOpen(port: number, localAddress: string): Promise<HalfOpen> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  const received: Buffer[] = [];
  socket.on('data', (d: Buffer) => received.push(d));
  socket.on('error', () => undefined);
  const closedByServer = new Promise<boolean>((resolve) => {
    socket.once('end', () => resolve(true));
    socket.once('close', () => resolve(true));
  });
  await once(socket, 'connect');
  return { socket, received, closedByServer };
}

const client = (port: number, user: string, password: string) => {
  const c = new pg.Client({ host: '127.0.0.1', port, user, password, database: 'sensorData', connectionTimeoutMillis: 30_000 });
  c.on('error', () => undefined);
  return c;
};

test("organisation A's 500 half-open sockets and all its sessions do not stop organisation B's psql", async (t) => {
  // The settings as `platform-cloud serve` reads them; a short handshake timer so the test sees it fire.
  const limits = pgLimitsFromEnv({
    PLATFORM_QUERY_PG_HANDSHAKE_TIMEOUT_MS: '3000',
    PLATFORM_QUERY_PG_MAX_SESSIONS_PER_ORG: '5',
  });
  t.is(limits.maxConnections, 200, 'the global cap keeps its default');
  t.is(limits.maxStartupsPerAddress, 20, 'the per-address start-up limit has its default');
  const te = await startTestEndpoint({ limits });
  const sockets: HalfOpen[] = [];
  const sessionsOfA: pg.Client[] = [];
  try {
    // 500 sockets that never send a start-up message, from A's own address.
    for (let i = 0; i < 500; i += 50) sockets.push(...(await Promise.all(Array.from({ length: 50 }, () => halfOpen(te.port, '127.0.0.2')))));
    // A's sessions, up to its limit, left idle.
    for (let i = 0; i < 5; i++) {
      const c = client(te.port, USER_A, PASSWORD_A);
      await c.connect();
      sessionsOfA.push(c);
    }
    const sixth = client(te.port, USER_A, PASSWORD_A);
    const refused = (await t.throwsAsync(sixth.connect())) as Error & { code?: string };
    t.is(refused.code, '53300');
    t.regex(refused.message, /too many connections for role "db-user-org-a" \(the 5-session limit per organization, PLATFORM_QUERY_PG_MAX_SESSIONS_PER_ORG\)/);
    await sixth.end().catch(() => undefined);
    t.is(te.endpoint.slots.sessionsOf('org-a'), 5, 'the refused sixth session left no count behind');

    // B connects and queries, with psql and with node-postgres.
    const b = await psql(te.port, USER_B, PASSWORD_B, 'SELECT count(*) FROM readings');
    t.true(b.ok, b.out);
    t.is(b.out, '1');
    const bClient = client(te.port, USER_B, PASSWORD_B);
    await bClient.connect();
    t.is((await bClient.query('SELECT 1 AS one')).rows[0].one, 1);
    await bClient.end();
    // A's sessions still work.
    t.is((await sessionsOfA[0].query('SELECT count(*)::INTEGER AS n FROM readings')).rows[0].n, 3);

    // Of the 500 sockets, the endpoint kept 20 waiting for their start-up; the rest were refused at once
    // with a FATAL 53300 naming the per-address limit.
    const verdicts = await Promise.all(sockets.map((s) => s.closedByServer.then(() => Buffer.concat(s.received).toString('latin1'))));
    const refusals = verdicts.filter((v) => v.includes('53300'));
    t.is(refusals.length, 480);
    t.regex(
      refusals[0],
      /too many connections from 127\.0\.0\.2 that have not logged in yet \(the 20-connection limit per address, PLATFORM_QUERY_PG_MAX_STARTUPS_PER_ADDRESS\)/,
    );
    // The 20 kept ones were closed by the handshake timer (the await above returned for every socket,
    // and none of them was closed by this side), without a word.
    t.is(verdicts.filter((v) => v === '').length, 20);
    // The server's own close handlers run right after the peer saw the close: wait for them, no timing.
    while (te.endpoint.slots.startupsFrom('127.0.0.2') > 0) await new Promise((r) => setTimeout(r, 20));
    t.pass('every start-up place of 127.0.0.2 was given back');
  } finally {
    for (const s of sockets) s.socket.destroy();
    for (const c of sessionsOfA) await c.end().catch(() => undefined);
    await te.close();
  }
});

test('connection slots: a connection counts against its address until it logs in, then against its organisation', (t) => {
  const slots = new ConnectionSlots({ maxConnections: 10, maxStartupsPerAddress: 2, maxSessionsPerOrganization: 2 });
  const take = (address: string): ConnectionSlot => {
    const s = slots.accept(address);
    if (isRefusal(s)) throw new Error(s.message);
    return s;
  };
  const a1 = take('10.0.0.1');
  const a2 = take('::ffff:10.0.0.1'); // the same client seen through a dual-stack socket
  const third = slots.accept('10.0.0.1');
  t.true(isRefusal(third));
  t.regex(isRefusal(third) ? third.message : '', /PLATFORM_QUERY_PG_MAX_STARTUPS_PER_ADDRESS/);
  t.false(isRefusal(slots.accept('10.0.0.2')), 'another address is not affected');
  // Logging in frees the address's start-up place for the next client.
  t.is(a1.loggedIn('org-a', 'db-user-org-a'), undefined);
  t.is(slots.startupsFrom('10.0.0.1'), 1);
  const a3 = take('10.0.0.1');
  t.is(a2.loggedIn('org-a', 'db-user-org-a'), undefined);
  const over = a3.loggedIn('org-a', 'db-user-org-a');
  t.is(over?.code, '53300');
  t.regex(over?.message ?? '', /the 2-session limit per organization, PLATFORM_QUERY_PG_MAX_SESSIONS_PER_ORG/);
  t.is(a3.loggedIn('org-b', 'db-user-org-b'), undefined, 'another organisation has its own count');
  a1.release();
  a1.release(); // a second release changes nothing
  t.is(slots.sessionsOf('org-a'), 1);
  a2.release();
  a3.release();
  t.is(slots.sessionsOf('org-a'), 0);
  t.is(slots.sessionsOf('org-b'), 0);
  t.is(slots.size, 1, 'only the 10.0.0.2 connection is still open');
  // The global cap counts every open connection, logged in or not.
  const full = new ConnectionSlots({ maxConnections: 1, maxStartupsPerAddress: 5, maxSessionsPerOrganization: 5 });
  t.false(isRefusal(full.accept('10.0.0.3')));
  const refusedGlobally = full.accept('10.0.0.4');
  t.regex(isRefusal(refusedGlobally) ? refusedGlobally.message : '', /too many clients already \(the 1-connection limit, PLATFORM_QUERY_PG_MAX_CONNECTIONS\)/);
});

test('an IPv6 client counts as its /64, an IPv4 one as its address', (t) => {
  t.is(addressGroup('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  t.is(addressGroup('2001:db8:1:2::5'), '2001:db8:1:2::/64');
  t.is(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
  t.is(addressGroup('::1'), '0:0:0:0::/64');
  t.is(addressGroup('fe80::1%eth0'), 'fe80::1%eth0');
  t.is(addressGroup('::ffff:10.1.2.3'), '10.1.2.3');
  t.is(addressGroup('10.1.2.3'), '10.1.2.3');
  const slots = new ConnectionSlots({ maxConnections: 100, maxStartupsPerAddress: 2, maxSessionsPerOrganization: 2 });
  t.false(isRefusal(slots.accept('2001:db8:1:2::a')));
  t.false(isRefusal(slots.accept('2001:db8:1:2::b')));
  const third = slots.accept('2001:db8:1:2:ffff::c');
  t.regex(isRefusal(third) ? third.message : '', /too many connections from 2001:db8:1:2::\/64 that have not logged in yet/);
  t.false(isRefusal(slots.accept('2001:db8:1:3::a')), 'the next /64 is another client');
});

test('when the endpoint is full, a new connection takes the place of the oldest one that has not logged in after a second', (t) => {
  let clock = 0;
  const slots = new ConnectionSlots({ maxConnections: 3, maxStartupsPerAddress: 10, maxSessionsPerOrganization: 10 }, () => clock);
  const evicted: string[] = [];
  const take = (address: string) => {
    const s = slots.accept(address, () => evicted.push(address));
    if (isRefusal(s)) throw new Error(s.message);
    return s;
  };
  const session = take('10.0.0.1');
  t.is(session.loggedIn('org-a', 'db-user-org-a'), undefined);
  clock = 10;
  take('10.0.0.2');
  clock = 20;
  take('10.0.0.3');
  clock = 500;
  const tooSoon = slots.accept('10.0.0.4', () => evicted.push('10.0.0.4'));
  t.regex(isRefusal(tooSoon) ? tooSoon.message : '', /too many clients already \(the 3-connection limit/, 'nobody has waited a second yet');
  clock = 10 + EVICT_STARTUP_AFTER_MS;
  take('10.0.0.4');
  t.deepEqual(evicted, ['10.0.0.2'], 'the oldest that had not logged in, never the logged-in session');
  t.is(slots.size, 3);
  t.is(slots.startupsFrom('10.0.0.2'), 0);
  t.is(slots.sessionsOf('org-a'), 1);
  // Once only logged-in sessions (and young start-ups) are left, new connections are refused.
  clock += 10 * EVICT_STARTUP_AFTER_MS;
  take('10.0.0.5'); // evicts 10.0.0.3
  const s5 = slots.accept('10.0.0.6', () => evicted.push('10.0.0.6')); // evicts 10.0.0.4
  t.false(isRefusal(s5));
  t.deepEqual(evicted, ['10.0.0.2', '10.0.0.3', '10.0.0.4']);
});

test('half-open sockets from many addresses filling the whole endpoint do not stop a login', async (t) => {
  // 30 places; 127.0.0.2, .3 and .4 hold them all with sockets that never send anything (at most 20 each).
  const limits = pgLimitsFromEnv({ PLATFORM_QUERY_PG_MAX_CONNECTIONS: '30' });
  const te = await startTestEndpoint({ limits });
  const sockets: HalfOpen[] = [];
  try {
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) for (let i = 0; i < 10; i++) sockets.push(await halfOpen(te.port, address));
    t.is(te.endpoint.slots.size, 30);
    // They are old enough to be evicted once a second has passed (the handshake timer is still 10 s).
    await new Promise((r) => setTimeout(r, EVICT_STARTUP_AFTER_MS + 100));
    const b = await psql(te.port, USER_B, PASSWORD_B, 'SELECT count(*) FROM readings');
    t.true(b.ok, b.out);
    t.is(b.out, '1');
    t.true(await sockets[0].closedByServer, 'the oldest half-open socket made room');
  } finally {
    for (const s of sockets) s.socket.destroy();
    await te.close();
  }
});
