// One login gate per cloud: failed PostgreSQL logins (psql) count toward AuthService/Authenticate's
// back-off of the same source address, and failed Authenticate calls toward the PostgreSQL endpoint's.
// Each direction gets its own spawned cloud, since a backed-off address stays backed off.
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { AuthServiceClient, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { createCloudClient } from '../client/index.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';

const ADDRESS_LIMIT = 4;
const PASSWORD = 'a right database password';

test.before(() => {
  process.env.PLATFORM_QUERY_PG_PORT = '0';
  // The address limit is lower than the key id limit (10), so only the shared address count can refuse.
  process.env.PLATFORM_LOGIN_MAX_ADDRESS_FAILURES = String(ADDRESS_LIMIT);
});

interface Setup {
  cloud: SpawnedCloud;
  auth: AuthServiceClient;
  key: { id: string; key: string };
  pgUri: string;
}

async function setUp(t: ExecutionContext): Promise<Setup> {
  const cloud = await spawnCloud();
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(cloud.dataDir);
  });
  const orgId = (await adminJson(cloud.dataDir, ['org', 'create', 'gate'])).id;
  const key = await adminJson<{ id: string; key: string }>(cloud.dataDir, ['key', 'create', '--org', orgId, '--role', 'owner']);
  const client = createCloudClient({ serviceHost: `http://${cloud.address}`, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  await client.dataClient.configureDatabaseUser(orgId, PASSWORD);
  const pgUri = (await client.dataClient.getDatabaseConnection(orgId)).uri;
  client.close();
  const auth = new AuthServiceClient(cloud.address, credentials.createInsecure());
  t.teardown(() => auth.close());
  return { cloud, auth, key, pgUri };
}

const login = (auth: AuthServiceClient, entity: string, payload: string) =>
  new Promise<AuthenticateResponse>((resolve, reject) =>
    auth.authenticate({ entity, credentials: { type: 'api-key', payload } }, new Metadata(), (err, res) => (err ? reject(err) : resolve(res!))),
  );

function psql(pgUri: string, password: string): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('psql', [`${pgUri}?sslmode=disable`, '-X', '-A', '-t', '-c', 'SELECT 1'], {
      env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '20' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ ok: code === 0, out: out.trim() }));
  });
}

test('failed psql logins count toward Authenticate: the address is refused there, even with the right key', async (t) => {
  const { auth, key, pgUri } = await setUp(t);
  const before = await login(auth, key.id, key.key);
  t.truthy(before.accessToken, 'the key logs in before the psql failures');
  for (let i = 0; i < ADDRESS_LIMIT; i++) {
    const r = await psql(pgUri, `wrong password ${i}`);
    t.false(r.ok);
    t.regex(r.out, /password authentication failed/);
  }
  const refused = await t.throwsAsync<ServiceError>(login(auth, key.id, key.key));
  t.is(refused.code, status.RESOURCE_EXHAUSTED);
  t.regex(refused.details, /login back-off: address 127\.0\.0\.1 had 4 or more failed logins/);
});

test('failed Authenticate calls count toward the PostgreSQL endpoint: psql is refused, even with the right password', async (t) => {
  const { auth, pgUri } = await setUp(t);
  t.deepEqual(await psql(pgUri, PASSWORD), { ok: true, out: '1' }, 'psql logs in before the Authenticate failures');
  for (let i = 0; i < ADDRESS_LIMIT; i++) {
    // A different unknown key id each time: only the address count can add up to the limit.
    const err = await t.throwsAsync<ServiceError>(login(auth, `no-such-key-${i}`, 'wrong secret'));
    t.is(err.code, status.UNAUTHENTICATED);
  }
  const refused = await psql(pgUri, PASSWORD);
  t.false(refused.ok);
  t.regex(refused.out, /login back-off: address 127\.0\.0\.1 had 4 or more failed logins/);
});
