// Two platform-cloud processes on one PostgreSQL and one S3 (issue 33's scale-out mode), each the real
// program with --backend-store-uri and --artifacts-destination: what one accepts, the other serves; a
// token of one works on the other; a key revoked through one is refused by the other within a second;
// after kill -9 of one during uploads, everything it acknowledged is whole on the other and no upload
// is half there; then the leader's sweep removes only objects that no row names.
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataServiceClient } from '../../gen/platform/app/data/v1/data.js';
import { AuthServiceClient, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { createCloudClient, type CloudClient } from '../client/cloud-client.js';
import type { PgStore } from '../store/pg-store.js';
import { startScaleOutBackends, spawnScaleOutCloud, type ScaleOutBackends } from '../testing/scale-out.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../testing/spawn-cloud.js';

let backends: ScaleOutBackends;
let tables: PgStore;
let a: SpawnedCloud;
let b: SpawnedCloud;
let org: string;
let partId: string;
let owner: { id: string; key: string };
const clients: CloudClient[] = [];

test.before(async () => {
  backends = await startScaleOutBackends();
  tables = await backends.openTables();
  // The elected process sweeps every second, objects unnamed for 5 s (far more than an upload takes
  // from its content to its row, even on a loaded machine), so the test waits seconds, not minutes.
  const env = { PLATFORM_BLOB_ORPHAN_AGE_S: '5', PLATFORM_BLOB_SWEEP_INTERVAL_S: '1' };
  [a, b] = await Promise.all([spawnScaleOutCloud(backends, [], env), spawnScaleOutCloud(backends, [], env)]);
  org = (await createOrganization(tables, { name: 'fleet' })).id;
  partId = (await createMachine(tables, { org, name: 'rover' })).part_id;
  owner = await createKey(tables, { org, role: 'owner' });
});

test.after.always(async () => {
  for (const client of clients) client.close();
  for (const cloud of [a, b]) {
    if (!cloud) continue;
    await cloud.stop().catch(() => undefined);
    removeDataDir(cloud.dataDir);
  }
  await backends?.stop();
});

const clientOf = (cloud: SpawnedCloud, key = owner) => {
  const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  clients.push(client);
  return client;
};

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

const readingsOf = (n: number, label: string) => ({
  data: Array.from({ length: n }, (_, i) => ({ readings: { label, i } })),
  times: Array.from({ length: n }, (_, i): [Date, Date] => [new Date(Date.UTC(2026, 10, 1, 0, 0, 0, i)), new Date(Date.UTC(2026, 10, 1, 0, 0, 0, i + 1))]),
});

test.serial('an upload through A reads back through B: readings, a capture and a streamed file larger than one S3 part', async (t) => {
  const viaA = clientOf(a).dataClient;
  const viaB = clientOf(b).dataClient;
  const { data, times } = readingsOf(300, 'through-a');
  await viaA.tabularDataCaptureUpload(data, partId, 'rdk:component:sensor', 'thermo-a', 'Readings', times, ['pair']);
  const image = randomBytes(3000);
  const big = randomBytes(9 * 1024 * 1024 + 17);
  const imageId = await viaA.binaryDataCaptureUpload(image, partId, 'rdk:component:camera', 'cam', 'GetImages', '.png', [new Date(), new Date()]);
  const fileId = await viaA.fileUpload(big, partId, { fileName: 'scan.bin' });

  const rows = await viaB.tabularDataByFilter({ componentName: 'thermo-a' }, { limit: 1000 });
  t.is(rows.data.length, 300, 'every reading A took is served by B');
  t.deepEqual(
    rows.data.map((r) => (r.data as { readings: { i: number } }).readings.i).sort((x, y) => x - y),
    data.map((_, i) => i),
  );
  const [gotImage, gotFile] = await viaB.binaryDataByIds([imageId, fileId], { includeBinary: true });
  t.true(Buffer.from(gotImage.binary).equals(image), 'the capture A stored reads back whole through B');
  t.true(Buffer.from(gotFile.binary).equals(big), 'the streamed (multipart) file A stored reads back whole through B');
});

test.serial("A's access token works on B, and B's on A", async (t) => {
  const fromA = await login(a, owner.id, owner.key);
  const fromB = await login(b, owner.id, owner.key);
  t.is(await dataCall(b, fromA.accessToken), 0, 'B accepts the token A signed');
  t.is(await dataCall(a, fromB.accessToken), 0, 'A accepts the token B signed');
});

test.serial('a key revoked through A is refused by B within a second, tokens and logins alike', async (t) => {
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

/** What a writer sent and got acknowledged. */
interface Acked {
  tabular: { component: string; points: number }[];
  files: { id: string; sha: string }[];
}

test.serial(
  'kill -9 of A during uploads: everything A acknowledged is whole through B, nothing is half there; the sweep then removes only unnamed objects',
  async (t) => {
    const viaA = clientOf(a).dataClient;
    const acked: Acked = { tabular: [], files: [] };
    const points = 400;
    let stop = false;
    let sent = 0;
    const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    // Four writers on A, each in turn: readings of one component per upload, a file (FileUpload, some past
    // one 8 MiB S3 part: a multipart upload through a temp object) and a streamed capture
    // (StreamingDataCaptureUpload), until A dies under them.
    let killed = false;
    const failures: string[] = [];
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          if (i % 3 === 0) {
            const component = `kill-${w}-${i}`;
            const { data, times } = readingsOf(points, component);
            sent++;
            await viaA.tabularDataCaptureUpload(data, partId, 'rdk:component:sensor', component, 'Readings', times, ['kill']);
            acked.tabular.push({ component, points });
          } else if (i % 3 === 1) {
            const bytes = randomBytes(w % 2 === 0 ? 9 * 1024 * 1024 : 200_000 + i);
            sent++;
            const id = await viaA.fileUpload(bytes, partId, { fileName: `f-${w}-${i}.bin`, tags: ['kill'] });
            acked.files.push({ id, sha: sha(bytes) });
          } else {
            const bytes = randomBytes(w % 2 === 0 ? 6 * 1024 * 1024 : 300_000 + i);
            sent++;
            const id = await viaA.streamingDataCaptureUpload(bytes, partId, '.bin', {
              componentType: 'rdk:component:camera',
              componentName: `cam-${w}`,
              tags: ['kill'],
            });
            acked.files.push({ id, sha: sha(bytes) });
          }
        } catch (err) {
          // A is gone: the call in flight is not acknowledged. Before the kill, a failure is a bug.
          if (!killed) failures.push(String(err));
          return;
        }
      }
    });
    // Kill once some uploads of each kind were acknowledged, with the writers mid-upload.
    let writersEnded = false;
    void Promise.all(writers).then(() => (writersEnded = true));
    while ((acked.tabular.length < 4 || acked.files.length < 4) && !writersEnded) await sleep(20);
    t.false(writersEnded, 'the writers were still uploading when A was killed (none failed before)');
    killed = true;
    await a.kill9();
    stop = true;
    await Promise.all(writers);
    t.deepEqual(failures, [], 'no upload failed before the kill');
    t.log(`A acknowledged ${acked.tabular.length} reading uploads and ${acked.files.length} files of ${sent} started`);

    const viaB = clientOf(b).dataClient;
    for (const upload of acked.tabular) {
      const rows = await viaB.tabularDataByFilter({ componentName: upload.component }, { limit: 1000 });
      t.is(rows.data.length, upload.points, `acknowledged upload ${upload.component} is whole on B`);
    }
    const files = await viaB.binaryDataByIds(
      acked.files.map((f) => f.id),
      { includeBinary: true },
    );
    t.deepEqual(
      files.map((f) => sha(f.binary)),
      acked.files.map((f) => f.sha),
      'every file A acknowledged reads back byte for byte through B',
    );
    // No half rows: every upload in the database has all of its points, acknowledged or not.
    const groups = await tables.query("SELECT component_name, count(*) AS n FROM tabular_data WHERE component_name LIKE 'kill-%' GROUP BY component_name");
    t.deepEqual(
      groups.filter((g) => Number(g.n) !== points),
      [],
      'an upload is in the database whole or not at all',
    );
    // Every binary row names content that is there.
    const named = (await tables.query('SELECT blob_key FROM binary_data')).map((r) => String(r.blob_key));
    const before = new Set<string>();
    for await (const blob of tables.blobs.list!()) before.add(blob.key);
    t.deepEqual(
      named.filter((k) => !before.has(k)),
      [],
      'no row names missing content',
    );

    // The sweep: an object no row names (as content stored just before a crash leaves), plus whatever A's
    // kill left, is removed by the leader (B now); every named object stays.
    await tables.blobs.put(`${org}/orphan-after-kill`, Buffer.from('no row names me'));
    const unnamed = () => [...before, `${org}/orphan-after-kill`].filter((k) => !named.includes(k));
    t.true(unnamed().length >= 1);
    let left: string[] = [];
    for (let attempt = 0; attempt < 300; attempt++) {
      left = [];
      for await (const blob of tables.blobs.list!()) left.push(blob.key);
      if (!left.some((k) => !named.includes(k))) break;
      await sleep(100);
    }
    t.deepEqual(
      left.filter((k) => !named.includes(k)),
      [],
      'the sweep removed every object no row names',
    );
    t.deepEqual(left.sort(), [...named].sort(), 'and kept every named one');
  },
);

test('serve refuses half a pair, a missing bucket and an unreachable database, naming the flag', async (t) => {
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
