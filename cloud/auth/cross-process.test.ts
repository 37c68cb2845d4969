// What two processes of the scale-out mode share through PostgreSQL (issue 33), shown with two PgStores
// on one database, each as one process would open it: the token secret (a token signed by one verifies
// on the other), the login back-off's counts (attempts spread over processes add up), and key
// revocation (a key revoked through one is refused by the other's Authorizer at once, by notification).
// The embedded default keeps its secret file and its in-process gate: shown alongside.
import test from 'ava';
import { Metadata } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { revokeKey, rotateKey } from '../admin/api-keys.js';
import { createKey, createOrganization } from '../admin/tenancy.js';
import { storeChannels } from '../store/pg-notify.js';
import { sameDatabase } from '../testing/same-database.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { authenticate, HashSlots } from './auth-service.js';
import { Authorizer, KEY_CHANNEL } from './authorizer.js';
import { cloudAuthFor } from './cloud-auth.js';
import { loginGateForStore, PgLoginBackoff } from './login-backoff-pg.js';
import { LoginBackoff } from './login-backoff.js';
import { TokenSigner } from './token.js';

const [duckdb, postgres] = tabularBackends(test);

const bearer = (token: string) => {
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
};

test('postgres: processes starting together agree on one token secret; a token signed by one verifies on the other', async (t) => {
  const a = await postgres.open(t);
  const others = await Promise.all([1, 2, 3].map(() => sameDatabase(t, postgres, a)));
  const signers = await Promise.all([a, ...others].map((store) => TokenSigner.forStore(store, 60)));
  const token = signers[1].sign('key-1', 'api-key');
  for (const signer of signers) t.is(signer.verify(token).sub, 'key-1');
  t.deepEqual(await a.query('SELECT count(*) AS n FROM cloud_secrets'), [{ n: 1n }]);
  // A later process (a restart) reads the same secret.
  t.is((await TokenSigner.forStore(await sameDatabase(t, postgres, a))).verify(token).kind, 'api-key');
  // Another cloud (another database) has another secret.
  const elsewhere = await TokenSigner.forStore(await postgres.open(t));
  t.throws(() => elsewhere.verify(token), { message: /signature is invalid/ });
});

test('duckdb: the embedded default keeps its secret in <data-dir>/token-secret, not in the store', async (t) => {
  const store = await duckdb.open(t);
  await t.throwsAsync(TokenSigner.forStore(store), { message: /kept in PostgreSQL; the embedded store uses forDataDir/ });
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  const token = TokenSigner.forDataDir(dir).sign('part-1', 'part');
  t.true(existsSync(join(dir, 'token-secret')));
  t.is(Buffer.from(readFileSync(join(dir, 'token-secret'), 'utf8'), 'base64').length, 32);
  t.is(TokenSigner.forDataDir(dir).verify(token).sub, 'part-1', 'a restart reads the same file');
});

test('postgres: failures spread over two processes add up to one back-off, seen by both', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a);
  const gates = [new PgLoginBackoff(a), new PgLoginBackoff(b)];
  for (let i = 0; i < 9; i++) {
    const gate = gates[i % 2];
    await gate.check('key-a', '10.0.0.1');
    await gate.failed('key-a', '10.0.0.1');
  }
  await t.notThrowsAsync(gates[0].check('key-a', '10.0.0.1'));
  await gates[1].failed('key-a', '10.0.0.1');
  for (const gate of gates) {
    const err = await t.throwsAsync(gate.check('key-a', '10.0.0.2'));
    t.is((err as { code?: number }).code, status.RESOURCE_EXHAUSTED);
    t.regex(err.message, /key id key-a had 10 or more failed logins within 60 s; retry after .* \(in 60 s\)/);
  }
  await t.notThrowsAsync(gates[0].check('key-b', '10.0.0.1'), 'another key id from the same address is not affected');
  // The address: 100 failures over both processes, with a different key id each time.
  for (let i = 0; i < 100; i++) await gates[i % 2].failed(`key-${i}`, '::ffff:10.0.0.9');
  for (const gate of gates) await t.throwsAsync(gate.check('key-new', '10.0.0.9'), { message: /address 10\.0\.0\.9 had 100 or more/ });
});

test('postgres: Authenticate on two processes: ten wrong keys spread over both refuse even the right key on both', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a);
  const org = await createOrganization(a, { name: 'logins' });
  const key = await createKey(a, { org: org.id, role: 'owner' });
  const deps = await Promise.all(
    [a, b].map(async (store) => ({ store, tokens: await TokenSigner.forStore(store), gate: new PgLoginBackoff(store), hashes: new HashSlots() })),
  );
  const login = (i: number, payload: string) => authenticate(deps[i % 2], { entity: key.id, credentials: { type: 'api-key', payload } }, `10.3.0.${i}`);
  const first = await login(0, key.key);
  t.is(deps[1].tokens.verify(first.accessToken).sub, key.id, "a token from A's Authenticate verifies on B");
  for (let i = 0; i < 10; i++) await t.throwsAsync(login(i, 'wrong'), { message: /invalid credentials/ });
  for (const i of [0, 1]) {
    const err = await t.throwsAsync(login(i, key.key));
    t.is((err as { code?: number }).code, status.RESOURCE_EXHAUSTED);
  }
});

test('postgres: failures arriving at once on two processes are each counted: none is lost to a race', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a, { poolSize: 4 });
  const gates = [new PgLoginBackoff(a, { maxKeyFailures: 40 }), new PgLoginBackoff(b, { maxKeyFailures: 40 })];
  await Promise.all(Array.from({ length: 39 }, (_, i) => gates[i % 2].failed('key-r', `10.1.0.${i}`)));
  await t.notThrowsAsync(gates[0].check('key-r', '10.2.0.1'), '39 failures: not yet');
  t.deepEqual(await a.query(`SELECT failures FROM login_failures WHERE kind = 'key' AND id = 'key-r'`), [{ failures: 39 }]);
  await gates[1].failed('key-r', '10.1.0.99');
  await t.throwsAsync(gates[0].check('key-r', '10.2.0.1'), { message: /key id key-r had 40 or more/ });
});

test('postgres: windows and back-off periods pass, a success clears the key count on every process, and the table stays bounded', async (t) => {
  const a = await postgres.open(t);
  const b = await sameDatabase(t, postgres, a);
  let now = Date.UTC(2026, 10, 27, 3, 0, 0);
  const clock = () => now;
  const gateA = new PgLoginBackoff(a, { now: clock, maxEntries: 50 });
  const gateB = new PgLoginBackoff(b, { now: clock, maxEntries: 50 });
  // Failures more than a window apart do not add up.
  for (let i = 0; i < 30; i++) {
    await (i % 2 ? gateA : gateB).failed('key-a', 'addr');
    now += 10_000;
  }
  await t.notThrowsAsync(gateA.check('key-a', 'addr'));
  // A success through A clears the count B adds to; the address keeps its count.
  for (let i = 0; i < 9; i++) await gateB.failed('key-c', 'addr-c');
  await gateA.succeeded('key-c');
  await gateB.failed('key-c', 'addr-c');
  await t.notThrowsAsync(gateB.check('key-c', 'elsewhere'));
  // Once backing off, it ends after its period.
  for (let i = 0; i < 10; i++) await gateA.failed('key-d', `addr-d${i}`);
  await t.throwsAsync(gateB.check('key-d', 'x'));
  now += 60_000;
  await t.notThrowsAsync(gateB.check('key-d', 'x'));
  // A flood of random key ids from many addresses: the table keeps at most maxEntries per kind.
  for (let i = 0; i < 300; i++) await gateA.failed(randomUUID(), `flood-${i}`);
  await gateA.prune();
  const counts = await a.query('SELECT kind, count(*) AS n FROM login_failures GROUP BY kind ORDER BY kind');
  t.deepEqual(counts, [
    { kind: 'address', n: 50n },
    { kind: 'key', n: 50n },
  ]);
  // Rows whose window passed and that are not backing off say nothing: pruned.
  now += 120_000;
  await gateB.prune();
  t.deepEqual(await a.query('SELECT count(*) AS n FROM login_failures'), [{ n: 0n }]);
});

test('both: loginGateForStore gives the PostgreSQL gate to a PgStore and the in-process one to the embedded store', async (t) => {
  t.true(loginGateForStore(await postgres.open(t), {}) instanceof PgLoginBackoff);
  const embedded = await duckdb.open(t);
  const local = loginGateForStore(embedded, { PLATFORM_LOGIN_MAX_FAILURES: '3' });
  t.true(local instanceof LoginBackoff);
  t.is((local as LoginBackoff).maxKeyFailures, 3);
  t.throws(() => loginGateForStore(embedded, { PLATFORM_LOGIN_WINDOW_S: 'soon' }), { message: /PLATFORM_LOGIN_WINDOW_S must be a number/ });
});

test('both: cloudAuthFor gives the embedded store the data dir secret and the in-process gate, a PgStore the shared ones', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  const embedded = await cloudAuthFor(await duckdb.open(t), dir, 120, {});
  t.true(existsSync(join(dir, 'token-secret')));
  t.is(embedded.tokens.ttlSeconds, 120);
  t.true(embedded.loginGate instanceof LoginBackoff);
  const a = await postgres.open(t);
  const scaled = await cloudAuthFor(a, dir, 120, {});
  const otherDir = tempDataDir();
  t.teardown(() => removeDataDir(otherDir));
  const other = await cloudAuthFor(await sameDatabase(t, postgres, a), otherDir, 120, {});
  t.false(existsSync(join(otherDir, 'token-secret')), 'the scale-out mode writes no secret file');
  t.true(scaled.loginGate instanceof PgLoginBackoff);
  t.is(other.tokens.verify(scaled.tokens.sign('k', 'api-key')).sub, 'k');
  t.throws(() => embedded.tokens.verify(scaled.tokens.sign('k', 'api-key')), { message: /signature/ }, 'not the data dir secret');
});

for (const backend of tabularBackends(test))
  test(`${backend.name}: a key revoked or rotated through one process is refused by another's Authorizer as soon as it is told`, async (t) => {
    const a = await backend.open(t);
    // On PostgreSQL a second process; on DuckDB (one process) the same store, as the admin channel uses it.
    const b = backend.name === 'postgres' ? await sameDatabase(t, backend, a) : a;
    const tokens = backend.name === 'postgres' ? await TokenSigner.forStore(a) : new TokenSigner(Buffer.alloc(32, 3));
    // A cache that never goes stale by age: only the notification can make B read the key again.
    const authorizer = new Authorizer(b, tokens, 3_600_000);
    await storeChannels(b).ready();
    const org = await createOrganization(a, { name: 'cross' });
    const revoked = await createKey(a, { org: org.id, role: 'owner' });
    const rotated = await createKey(a, { org: org.id, role: 'owner' });
    const revokedToken = tokens.sign(revoked.id, 'api-key');
    const rotatedToken = tokens.sign(rotated.id, 'api-key', Date.now() - 5_000);
    t.is((await authorizer.authenticate(bearer(revokedToken))).kind, 'api-key');
    t.is((await authorizer.authenticate(bearer(rotatedToken))).kind, 'api-key');

    const told = new Promise<void>((resolve) => {
      const seen = new Set<string>();
      storeChannels(b).subscribe(KEY_CHANNEL, (id) => {
        seen.add(id);
        if (seen.has(revoked.id) && seen.has(rotated.id)) resolve();
      });
    });
    await revokeKey(a, { id: revoked.id });
    await rotateKey(a, { id: rotated.id });
    await told;
    await t.throwsAsync(authorizer.authenticate(bearer(revokedToken)), { message: /no longer exists or was revoked/ });
    await t.throwsAsync(authorizer.authenticate(bearer(rotatedToken)), { message: /issued before the key was rotated/ });
  });
