// What reads binary content out of the store, on both TabularStore backends (issue 33): ExportMcap
// (metadata from the tables, content from the blob store) and the thumbnail route (the caller's key
// read from the tables, the datum checked against it, the image from the blob store). The spawned
// cloud's tests (mcap-export.test.ts, thumbnails.test.ts) cover the rest on the embedded store.
import { status } from '@grpc/grpc-js';
import { PartLogs } from '../parts/part-logs.js';
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoreWithBlobs } from '../store/tabular.js';
import { binaryFixture, emptyFilter, type BinaryFixture } from '../testing/binary-fixture.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf as codeOf } from '../testing/tenancy-fixture.js';
import { noisyPng } from '../web/testing-images.js';
import { ThumbnailRoute } from '../web/thumbnails.js';
import { exportMcap } from './mcap-export.js';
import { readMcap } from './testing/read-mcap.js';

const backends = tabularBackends(test);
const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 0, 0, s));

async function reading(store: StoreWithBlobs, fx: BinaryFixture, org: string, machine: 'rover' | 'other', second: number, value: number) {
  const m = fx.machines[machine];
  await store.execute(
    `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, part_id, component_type, component_name, method_name, tags,
       time_requested, time_received, time_synced, data, internal, size_bytes)
     VALUES (?, 'u', ?, ?, ?, ?, 'rdk:component:sensor', 'thermo', 'Readings', CAST(? AS VARCHAR[]), ?, ?, ?, CAST(? AS JSON), false, 2)`,
    [second, org, m.location_id, m.machine_id, m.part_id, [], at(second), at(second), new Date(), JSON.stringify({ readings: { c: value } })],
  );
}

for (const backend of backends) {
  test(`${backend.name}: ExportMcap writes the organization's readings and images in time order, with their content, and refuses another organization`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    const png = noisyPng(8, 4);
    await fx.insert([
      { id: 'img2', time: at(2).toISOString(), seq: 1, mime: 'image/png', content: png },
      { id: 'img4', time: at(4).toISOString(), seq: 2, mime: 'image/png', content: noisyPng(4, 4) },
      { id: 'doc', time: at(5).toISOString(), seq: 3, mime: 'application/pdf', content: 'not an image' },
      { id: 'imgB', time: at(3).toISOString(), seq: 4, org: 'B', mime: 'image/png', content: png },
    ]);
    await reading(store, fx, fx.orgA, 'rover', 1, 20);
    await reading(store, fx, fx.orgA, 'rover', 3, 21);
    await reading(store, fx, fx.orgB, 'other', 2, 99);
    const chunks: Uint8Array[] = [];
    const count = await exportMcap(store, fx.authorizer, fx.keys.ownerA, undefined, async (bytes) => {
      chunks.push(bytes.slice());
    });
    t.is(count, 4, 'two readings and two images of org A; not the PDF, not org B');
    const mcap = await readMcap(Buffer.concat(chunks));
    t.is(mcap.messageCount, 4n);
    t.deepEqual(
      mcap.messages.map((m) => Number(m.logTime / 1_000_000_000n) - at(0).getTime() / 1000),
      [1, 2, 3, 4],
    );
    t.deepEqual(new Uint8Array(Buffer.from((mcap.messages[1].body as { data: string }).data, 'base64')), png);
    t.like(mcap.messages[2].body, { component_name: 'thermo', data: { readings: { c: 21 } } });
    const onlyImages = await exportMcap(store, fx.authorizer, fx.keys.ownerA, emptyFilter({ mimeType: ['image/png'] }), async () => undefined);
    t.is(onlyImages, 2, 'a binary-only filter leaves the readings out');
    t.is(
      await codeOf(exportMcap(store, fx.authorizer, fx.keys.ownerA, emptyFilter({ organizationIds: [fx.orgB] }), async () => undefined)),
      status.PERMISSION_DENIED,
    );
    t.is(await exportMcap(store, fx.authorizer, fx.keys.ownerB, undefined, async () => undefined), 2);
    // A filter naming a part brings its logs in, read from the logs table of either backend.
    const logs = await PartLogs.open(store, () => at(10).getTime());
    await logs.append(fx.machines.rover.part_id, [{ time: at(6), level: 'info', loggerName: 'rover', message: 'hello', fields: {} }]);
    const partChunks: Uint8Array[] = [];
    const withLogs = await exportMcap(store, fx.authorizer, fx.keys.ownerA, emptyFilter({ partId: fx.machines.rover.part_id }), async (bytes) => {
      partChunks.push(bytes.slice());
    });
    t.is(withLogs, 5);
    const farBack = emptyFilter({ partId: fx.machines.rover.part_id, interval: { start: new Date(-8.64e15) } });
    t.is(await exportMcap(store, fx.authorizer, fx.keys.ownerA, farBack, async () => undefined), 5, "a start before PostgreSQL's range is no start");
    const last = (await readMcap(Buffer.concat(partChunks))).messages[4];
    t.like(last.body, { message: 'hello' });
  });

  test(`${backend.name}: a thumbnail is served to a key of the datum's organization and scope only`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await fx.insert([
      { id: 'img', time: at(1).toISOString(), seq: 1, mime: 'image/png', content: noisyPng(32, 16) },
      { id: 'doc', time: at(2).toISOString(), seq: 2, mime: 'application/pdf', content: 'pdf' },
    ]);
    const route = new ThumbnailRoute(store, fx.authorizer);
    const server = createServer((req, res) => {
      void route.handle(req, res, new URL(req.url ?? '/', 'http://x')).then((handled) => {
        if (!handled) res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(async () => {
      route.close();
      await new Promise((resolve) => server.close(resolve));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/thumbnails`;
    const get = (path: string, keyId: string) => fetch(`${url}/${path}`, { headers: { authorization: `Bearer ${fx.tokens.sign(keyId, 'api-key')}` } });
    const ok = await get('img?size=16', fx.keys.ownerA.keyId);
    t.is(ok.status, 200);
    t.is(ok.headers.get('content-type'), 'image/jpeg');
    t.deepEqual([...new Uint8Array(await ok.arrayBuffer()).subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
    t.is((await get('img', fx.keys.operatorA.keyId)).status, 200, 'reading needs no owner');
    t.is((await get('img', fx.keys.ownerB.keyId)).status, 403, 'another organization');
    t.is((await get('img', fx.keys.ownerField.keyId)).status, 403, 'another location');
    t.is((await get('nope', fx.keys.ownerA.keyId)).status, 404);
    t.is((await get('doc', fx.keys.ownerA.keyId)).status, 415);
    t.is((await fetch(`${url}/img`)).status, 401, 'no token');
  });
}
