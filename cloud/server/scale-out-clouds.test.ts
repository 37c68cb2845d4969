// Two platform-cloud processes on one PostgreSQL and one S3 (issue 33's scale-out mode), each the real
// program with --backend-store-uri and --artifacts-destination: what one accepts, the other serves; a
// token of one works on the other; a key revoked through one is refused by the other within a second;
// after kill -9 of one during uploads, everything it acknowledged is whole on the other and no upload
// is half there; then the leader's sweep removes only objects that no row names.
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataServiceClient } from '../../gen/platform/app/data/v1/data.js';
import { AuthServiceClient, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { createKey } from '../admin/tenancy.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { testKillADuringUploads, testUploadThroughA, twoClouds } from '../testing/two-clouds.js';

// s3rver here (under a second to start); the S3-bound tests also run on Ceph's radosgw in
// scale-out-clouds-radosgw.test.ts, from the same fixture (cloud/testing/two-clouds.ts).
const world = twoClouds(test, { s3: 's3rver' });

const login = (cloud: SpawnedCloud, entity: string, payload: string) => {
  const auth = new AuthServiceClient(cloud.address, credentials.createInsecure());
  return new Promise<AuthenticateResponse>((resolve, reject) =>
    auth.authenticate({ entity, credentials: { type: 'api-key', payload } }, new Metadata(), (err, res) => {
      auth.close();
      return err ? reject(err) : resolve(res!);
    }),
  );
};

/** A data call on cloud with a bearer token: resolves with the status code (0: answered). */
const dataCall = (cloud: SpawnedCloud, token: string) => {
  const data = new DataServiceClient(cloud.address, credentials.createInsecure());
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return new Promise<number>((resolve) =>
    data.tagsByFilter({}, md, (err) => {
      data.close();
      resolve(err ? err.code : 0);
    }),
  );
};

testUploadThroughA(test, world);

test.serial("A's access token works on B, and B's on A", async (t) => {
  const { a, b, owner } = world;
  const fromA = await login(a, owner.id, owner.key);
  const fromB = await login(b, owner.id, owner.key);
  t.is(await dataCall(b, fromA.accessToken), 0, 'B accepts the token A signed');
  t.is(await dataCall(a, fromB.accessToken), 0, 'A accepts the token B signed');
});

test.serial('a key revoked through A is refused by B within a second, tokens and logins alike', async (t) => {
  const { a, b, tables, org } = world;
  const key = await createKey(tables, { org, role: 'operator' });
  const { accessToken } = await login(a, key.id, key.key);
  t.is(await dataCall(b, accessToken), 0, 'B knows the key as active (and has it cached)');
  await adminJson(a.dataDir, ['key', 'revoke', key.id]);
  await sleep(1000);
  t.is(await dataCall(b, accessToken), status.UNAUTHENTICATED, "B refuses the revoked key's token a second later");
  const err = await t.throwsAsync<ServiceError>(login(b, key.id, key.key));
  t.is(err.code, status.UNAUTHENTICATED, 'B refuses a login with the revoked key');
});

test.serial(
  'admin commands with the stores flags run on PostgreSQL from anywhere: a key the CLI creates logs in on B, revoked by the CLI it is refused by A',
  async (t) => {
    const { a, b, backends, org } = world;
    const dir = tempDataDir(); // no cloud runs here: the commands go to PostgreSQL directly
    t.teardown(() => removeDataDir(dir));
    const flags = ['--backend-store-uri', backends.backendStoreUri, '--artifacts-destination', backends.artifactsDestination];
    const key = await adminJson(dir, ['key', 'create', '--org', org, '--role', 'owner', ...flags]);
    const { accessToken } = await login(b, key.id, key.key);
    t.is(await dataCall(a, accessToken), 0);
    const listed = await adminJson<{ id: string; status: string }[]>(dir, ['key', 'list', '--org', org, ...flags]);
    t.is(listed.find((k) => k.id === key.id)?.status, 'active');
    await adminJson(dir, ['key', 'revoke', key.id, ...flags]);
    await sleep(1000);
    t.is(await dataCall(a, accessToken), status.UNAUTHENTICATED, 'A refuses the key a second after the CLI revoked it');
  },
);

// Last of the serial tests: it leaves A dead.
testKillADuringUploads(test, world);

test('serve refuses half a pair, a missing bucket and an unreachable database, naming the flag', async (t) => {
  const { backends } = world;
  const failure = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const err = await t.throwsAsync(spawnCloud(undefined, args, { ...backends.env, ...env }));
    return err.message;
  };
  t.regex(
    await failure(['--backend-store-uri', backends.backendStoreUri]),
    /--backend-store-uri needs --artifacts-destination s3:\/\/bucket\/prefix .* give both or neither/,
  );
  t.regex(
    await failure([], { PLATFORM_ARTIFACTS_DESTINATION: backends.artifactsDestination }),
    /PLATFORM_ARTIFACTS_DESTINATION \(the variable of --artifacts-destination\) needs --backend-store-uri/,
  );
  t.regex(
    await failure(['--backend-store-uri', backends.backendStoreUri, '--artifacts-destination', 's3://no-such-bucket/x', '--s3-endpoint', backends.s3.endpoint]),
    /--artifacts-destination: the bucket 'no-such-bucket' of s3:\/\/no-such-bucket\/x at http:\/\/\S+ does not exist/,
  );
  // A port nothing listens on (it was free a moment ago): the connection is refused at once.
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const closedPort = (holder.address() as AddressInfo).port;
  await new Promise((resolve) => holder.close(resolve));
  t.regex(
    await failure([
      '--backend-store-uri',
      `postgres://cloud:hunter2@127.0.0.1:${closedPort}/x`,
      '--artifacts-destination',
      backends.artifactsDestination,
      '--s3-endpoint',
      backends.s3.endpoint,
    ]),
    /--backend-store-uri postgres:\/\/cloud:\*\*\*@127\.0\.0\.1:\d+\/x: cannot open the database/,
  );
});
