import { credentials, Metadata, status } from '@grpc/grpc-js';
import test from 'ava';
import { AuthServiceClient, type AuthenticateRequest, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';

let cloud: SpawnedCloud;
let client: AuthServiceClient;
let key: { id: string; key: string };
let part: { part_id: string; part_secret: string };

test.before(async () => {
  cloud = await spawnCloud();
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'acme']);
  key = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  part = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  client = new AuthServiceClient(cloud.address, credentials.createInsecure());
});

test.after.always(async () => {
  client?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const authenticate = (request: AuthenticateRequest) =>
  new Promise<AuthenticateResponse>((resolve, reject) => client.authenticate(request, new Metadata(), (err, res) => (err ? reject(err) : resolve(res!))));

test('an API key id and key yield an expiring access token', async (t) => {
  const res = await authenticate({ entity: key.id, credentials: { type: 'api-key', payload: key.key } });
  t.regex(res.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.is(res.expiresInSeconds, 3600);
});

test('a machine part authenticates with its part id and secret', async (t) => {
  const res = await authenticate({ entity: part.part_id, credentials: { type: 'robot-secret', payload: part.part_secret } });
  t.truthy(res.accessToken);
});

test('a wrong key or an unknown key id is UNAUTHENTICATED', async (t) => {
  const wrong = await t.throwsAsync(authenticate({ entity: key.id, credentials: { type: 'api-key', payload: 'nope' } }));
  t.is((wrong as { code?: number }).code, status.UNAUTHENTICATED);
  const unknown = await t.throwsAsync(authenticate({ entity: 'no-such-id', credentials: { type: 'api-key', payload: key.key } }));
  t.is((unknown as { code?: number }).code, status.UNAUTHENTICATED);
});

test('a missing entity or an unknown credential type is INVALID_ARGUMENT naming the field', async (t) => {
  const noEntity = await t.throwsAsync(authenticate({ entity: '', credentials: { type: 'api-key', payload: key.key } }));
  t.is((noEntity as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(noEntity!.message, /entity/);
  const badType = await t.throwsAsync(authenticate({ entity: key.id, credentials: { type: 'password', payload: key.key } }));
  t.is((badType as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(badType!.message, /credentials\.type/);
});

test('an entity or payload longer than any id or key is INVALID_ARGUMENT naming the field, before the back-off counts it', async (t) => {
  const longEntity = await t.throwsAsync(authenticate({ entity: 'e'.repeat(257), credentials: { type: 'api-key', payload: key.key } }));
  t.is((longEntity as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(longEntity!.message, /entity: at most 256 characters \(an API key id or a machine part id\), got 257/);
  const longPayload = await t.throwsAsync(authenticate({ entity: key.id, credentials: { type: 'api-key', payload: 'k'.repeat(1025) } }));
  t.is((longPayload as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(longPayload!.message, /credentials\.payload: at most 1024 characters/);
  // 256 characters still reach the lookup: an unknown id, the usual answer.
  const atCap = await t.throwsAsync(authenticate({ entity: 'e'.repeat(256), credentials: { type: 'api-key', payload: key.key } }));
  t.is((atCap as { code?: number }).code, status.UNAUTHENTICATED);
});

test('the key is stored only as a hash', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  // The WAL or the database file would hold the plain key if it were stored.
  for (const file of ['platform.duckdb', 'platform.duckdb.wal']) {
    let content: string;
    try {
      content = readFileSync(join(cloud.dataDir, file)).toString('latin1');
    } catch {
      continue;
    }
    t.false(content.includes(key.key), `${file} holds the plain key`);
    t.false(content.includes(part.part_secret), `${file} holds the plain part secret`);
  }
});
