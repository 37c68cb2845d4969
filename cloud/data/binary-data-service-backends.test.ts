// DataService's binary calls through the real TypeScript client, on both TabularStore backends (issue
// 33): AuthService, DataSyncService and DataService served in this process over one StoreWithBlobs.
// Binary uploads go in through DataSync and come back through the binary handlers: pages, content,
// tags, boxes, deletes, and another organization refused at each. The embedded store's full service
// (errors, file uploads) is binary-data-api.test.ts against a spawned cloud.
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Order } from '../../gen/platform/app/data/v1/data.js';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { addAuthService } from '../auth/auth-service.js';
import { Authorizer } from '../auth/authorizer.js';
import { TokenSigner } from '../auth/token.js';
import { createCloudClient, type CloudClient } from '../client/cloud-client.js';
import { addDataSyncService } from '../datasync/data-sync-service.js';
import { QueryEngineSlot } from '../kit/query-engine-slot.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf as codeOf } from '../testing/tenancy-fixture.js';
import { addDataService } from './data-service.js';
import { PartDirectory } from './parts.js';

const backends = tabularBackends(test);

/** The services over `store` on a free port, and a client per API key; closed when the test ends. */
async function serve(t: { teardown(fn: () => Promise<void>): void }, store: StoreWithBlobs) {
  const tokens = new TokenSigner(randomBytes(32));
  const authorizer = new Authorizer(store, tokens);
  const parts = new PartDirectory(store);
  const server = new Server();
  addAuthService(server, store, tokens);
  addDataSyncService(server, { store, authorizer, parts });
  addDataService(server, { store, authorizer, parts, queryEngine: new QueryEngineSlot() });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const clients: CloudClient[] = [];
  t.teardown(async () => {
    for (const c of clients) c.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });
  const tenant = async (name: string) => {
    const org = (await createOrganization(store, { name })).id;
    const machine = await createMachine(store, { org, name: 'rover' });
    const key = await createKey(store, { org, role: 'owner' });
    const client = createCloudClient({ serviceHost: `127.0.0.1:${port}`, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } as never });
    clients.push(client);
    return { org, part: machine.part_id, data: client.dataClient };
  };
  return { a: await tenant('A'), b: await tenant('B') };
}

const at = (s: number): [Date, Date] => [new Date(Date.UTC(2026, 10, 27, 0, 0, s)), new Date(Date.UTC(2026, 10, 27, 0, 0, s))];

for (const backend of backends) {
  test(`${backend.name}: binary data uploaded through DataSync is paged, tagged, boxed and deleted through DataService, and refused to another organization`, async (t) => {
    const store = await backend.open(t);
    const { a, b } = await serve(t, store);
    const cam = 'rdk:component:camera';
    const ids: string[] = [];
    for (const s of [1, 2, 3]) ids.push(await a.data.binaryDataCaptureUpload(Buffer.from(`image ${s}`), a.part, cam, 'cam', 'GetImages', '.png', at(s), ['x']));
    const bId = await b.data.binaryDataCaptureUpload(Buffer.from('b image'), b.part, cam, 'cam', 'GetImages', '.png', at(2));

    // Pages newest first through the cursor; content comes back.
    const first = await a.data.binaryDataByFilter({}, { limit: 2 });
    const second = await a.data.binaryDataByFilter({}, { limit: 2, last: first.last });
    t.deepEqual(
      [...first.data, ...second.data].map((d) => d.metadata.binaryDataId),
      [...ids].reverse(),
    );
    t.is(Buffer.from(first.data[0].binary).toString(), 'image 3');
    const ascending = await a.data.binaryDataByFilter({ interval: { start: at(2)[0] } }, { sortOrder: Order.ORDER_ASCENDING, includeBinary: false });
    t.deepEqual(
      ascending.data.map((d) => d.metadata.binaryDataId),
      ids.slice(1),
    );
    t.like(await a.data.binaryDataByFilter({}, { countOnly: true }), { count: 3, totalSizeBytes: 21 });

    await a.data.addTagsToBinaryDataByIds(['y'], [ids[0]]);
    t.deepEqual(await a.data.tagsByFilter(), ['x', 'y']);
    t.is(await a.data.removeTagsFromBinaryDataByFilter(['x'], { organizationIds: [a.org] }), 3);
    t.deepEqual((await a.data.binaryDataByIds([ids[0]], { includeBinary: false }))[0].metadata.captureMetadata?.tags, ['y']);
    const box = await a.data.addBoundingBoxToImageById(ids[1], 'dog', 0, 0, 0.5, 0.5);
    t.deepEqual(await a.data.boundingBoxLabelsByFilter(), ['dog']);

    // Organization B: refused by id and by a filter naming A; its own reads never hold A's data.
    t.is(await codeOf(b.data.binaryDataByIds([ids[0]])), status.PERMISSION_DENIED);
    t.is(await codeOf(b.data.binaryDataByFilter({ organizationIds: [a.org] })), status.PERMISSION_DENIED);
    t.is(await codeOf(b.data.addTagsToBinaryDataByIds(['z'], [ids[0]])), status.PERMISSION_DENIED);
    t.is(await codeOf(b.data.removeBoundingBoxFromImageById(ids[1], box)), status.PERMISSION_DENIED);
    t.is(await codeOf(b.data.deleteBinaryDataByIds([ids[0]])), status.PERMISSION_DENIED);
    t.is(await codeOf(b.data.deleteBinaryDataByFilter({ organizationIds: [a.org] })), status.PERMISSION_DENIED);
    t.deepEqual(
      (await b.data.binaryDataByFilter()).data.map((d) => d.metadata.binaryDataId),
      [bId],
    );
    t.deepEqual(await b.data.boundingBoxLabelsByFilter(), []);

    await a.data.removeBoundingBoxFromImageById(ids[1], box);
    t.deepEqual(await a.data.boundingBoxLabelsByFilter(), []);
    t.is(await a.data.deleteBinaryDataByIds([ids[0]]), 1);
    t.is(await a.data.deleteBinaryDataByFilter({ organizationIds: [a.org] }), 2);
    t.is((await a.data.binaryDataByFilter()).data.length, 0);
    t.is((await b.data.binaryDataByFilter()).data.length, 1, "B's datum is untouched");
  });
}
