// key list / revoke / rotate against a running cloud, and the login back-off of AuthService/Authenticate.
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuthServiceClient, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { DataServiceClient } from '../../gen/platform/app/data/v1/data.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';

let cloud: SpawnedCloud;
let auth: AuthServiceClient;
let data: DataServiceClient;
let orgId: string;

test.before(async () => {
  cloud = await spawnCloud();
  orgId = (await adminJson(cloud.dataDir, ['org', 'create', 'keys'])).id;
  auth = new AuthServiceClient(cloud.address, credentials.createInsecure());
  data = new DataServiceClient(cloud.address, credentials.createInsecure());
});

test.after.always(async () => {
  auth?.close();
  data?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const login = (entity: string, payload: string) =>
  new Promise<AuthenticateResponse>((resolve, reject) =>
    auth.authenticate({ entity, credentials: { type: 'api-key', payload } }, new Metadata(), (err, res) => (err ? reject(err) : resolve(res!))),
  );

/** A data call with a token: resolves with the error code (0 on success). */
const dataCall = (token: string) =>
  new Promise<number>((resolve) => {
    const md = new Metadata();
    md.set('authorization', `Bearer ${token}`);
    data.tagsByFilter({}, md, (err) => resolve(err ? err.code : 0));
  });

const newKey = () => adminJson(cloud.dataDir, ['key', 'create', '--org', orgId, '--role', 'owner']);

test('key list shows the keys of an organization without secrets', async (t) => {
  const key = await newKey();
  const rows = await adminJson<Record<string, unknown>[]>(cloud.dataDir, ['key', 'list', '--org', orgId]);
  const row = rows.find((r) => r.id === key.id)!;
  t.like(row, { organization_id: orgId, scope: `organization:${orgId}`, role: 'owner', status: 'active', revoked_at: null });
  t.false(JSON.stringify(rows).includes(key.key));
  t.false('key_hash' in row);
});

test("a revoked key's tokens are refused within a second, and the key can no longer log in", async (t) => {
  const key = await newKey();
  const { accessToken } = await login(key.id, key.key);
  t.is(await dataCall(accessToken), 0);
  await adminJson(cloud.dataDir, ['key', 'revoke', key.id]);
  await sleep(1000);
  t.is(await dataCall(accessToken), status.UNAUTHENTICATED);
  const err = await t.throwsAsync<ServiceError>(login(key.id, key.key));
  t.is(err.code, status.UNAUTHENTICATED);
  const rows = await adminJson<Record<string, unknown>[]>(cloud.dataDir, ['key', 'list', '--org', orgId]);
  t.is(rows.find((r) => r.id === key.id)!.status, 'revoked');
  const again = await t.throwsAsync(adminJson(cloud.dataDir, ['key', 'revoke', key.id]));
  t.regex(again.message, /already revoked/);
});

test('rotate prints a new secret; the old secret and its tokens stop working, the new one works', async (t) => {
  const key = await newKey();
  const { accessToken: oldToken } = await login(key.id, key.key);
  // A token issued in the same second as the rotation is indistinguishable by its iat; step past it.
  await sleep(1100);
  const rotated = await adminJson(cloud.dataDir, ['key', 'rotate', key.id]);
  t.is(rotated.id, key.id);
  t.not(rotated.key, key.key);
  await sleep(1000);
  t.is(await dataCall(oldToken), status.UNAUTHENTICATED);
  t.is((await t.throwsAsync<ServiceError>(login(key.id, key.key))).code, status.UNAUTHENTICATED);
  const { accessToken } = await login(key.id, rotated.key);
  t.is(await dataCall(accessToken), 0);
});

test('revoke and rotate of an unknown key are NOT_FOUND-style errors naming the key', async (t) => {
  const err = await t.throwsAsync(adminJson(cloud.dataDir, ['key', 'revoke', 'no-such-key']));
  t.regex(err.message, /API key no-such-key does not exist/);
});

test('after 10 wrong keys in a minute a key id is refused with RESOURCE_EXHAUSTED, even with the right key; other key ids still log in', async (t) => {
  const victim = await newKey();
  const other = await newKey();
  for (let i = 0; i < 10; i++) {
    const err = await t.throwsAsync<ServiceError>(login(victim.id, `wrong-${i}`));
    t.is(err.code, status.UNAUTHENTICATED);
  }
  const refused = await t.throwsAsync<ServiceError>(login(victim.id, victim.key));
  t.is(refused.code, status.RESOURCE_EXHAUSTED);
  t.regex(refused.details, /login back-off: key id .* retry after/);
  t.truthy((await login(other.id, other.key)).accessToken);
});
