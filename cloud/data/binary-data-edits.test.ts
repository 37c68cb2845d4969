// BinaryDataStore changes on both TabularStore backends (issue 33): tags (with the internal marker
// and dataset membership kept in step), bounding boxes, deletes (metadata, boxes and content), each
// refused for another organization, a narrower scope or a lesser role. Reads: binary-data-reads.test.ts.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { internalTag } from '../store/schema.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { binaryFixture, emptyFilter, type BinaryFixture } from '../testing/binary-fixture.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf as codeOf } from '../testing/tenancy-fixture.js';
import { datasetTag } from './dataset-tag.js';

// PostgreSQL databases with an ICU collation (a before B): the orders returned must still be DuckDB's bytes order.
const backends = tabularBackends(test, { icuLocale: 'en-US' });

const box = (label: string, x = [0.1, 0.2, 0.3, 0.4]) => ({ label, xMinNormalized: x[0], yMinNormalized: x[1], xMaxNormalized: x[2], yMaxNormalized: x[3] });

async function rows(fx: BinaryFixture) {
  await fx.dataset('ds1');
  await fx.dataset('dsB', fx.orgB);
  await fx.insert([
    { id: 'j1', time: '2026-11-27T00:00:01Z', seq: 1, tags: ['m'], content: 'j1' },
    { id: 'p2', time: '2026-11-27T00:00:02Z', seq: 2, mime: 'image/png', tags: ['m', 'n'], content: 'p2' },
    { id: 'l3', time: '2026-11-27T00:00:03Z', seq: 3, machine: 'arm', mime: 'pointcloud/pcd', content: 'l3' },
    { id: 'i4', time: '2026-11-27T00:00:04Z', seq: 4, tags: [internalTag, 'm'], internal: true, content: 'i4' },
    { id: 'b5', time: '2026-11-27T00:00:05Z', seq: 5, org: 'B', tags: ['m'], content: 'b5' },
  ]);
}

const blobExists = async (store: StoreWithBlobs, fx: BinaryFixture, id: string) => (await store.blobs.get(fx.blobKey(id), 2)) !== undefined;

for (const backend of backends) {
  test(`${backend.name}: tags are added sorted by bytes and removed keeping their order, with the internal flag and dataset ids in step`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await rows(fx);
    const { binary, keys } = fx;
    await binary.addTagsByIds(keys.ownerA, ['j1', 'l3'], ['z', 'Y', 'm']);
    t.deepEqual(await fx.stored('j1'), { tags: ['Y', 'm', 'z'], datasets: [], internal: false }, "each once, 'Y' before 'm' (bytes, not a locale)");
    t.deepEqual((await fx.stored('l3'))?.tags, ['Y', 'm', 'z']);
    await binary.addTagsByIds(keys.ownerA, ['j1'], [internalTag, datasetTag('ds1')]);
    t.deepEqual(await fx.stored('j1'), { tags: ['PLATFORM_DATASET_ds1', 'Y', 'm', internalTag, 'z'], datasets: ['ds1'], internal: true });
    // Removal keeps the rest in order; the count is of rows that held one of the tags.
    t.is(await binary.removeTagsByIds(keys.ownerA, ['j1', 'p2', 'l3'], ['z', internalTag, datasetTag('ds1')]), 2);
    t.deepEqual(await fx.stored('j1'), { tags: ['Y', 'm'], datasets: [], internal: false });
    t.deepEqual(await fx.stored('p2'), { tags: ['m', 'n'], datasets: [], internal: false }, 'p2 held none of them: unchanged');
    // By filter: within the caller's organization (internal data included), and its scope.
    await binary.addTagsByFilter(keys.ownerA, emptyFilter({ mimeType: ['image/jpeg'] }), ['f']);
    t.deepEqual((await fx.stored('j1'))?.tags, ['Y', 'f', 'm']);
    t.deepEqual((await fx.stored('i4'))?.tags, ['f', 'm', internalTag]);
    t.deepEqual((await fx.stored('b5'))?.tags, ['m'], "org B's row is untouched");
    await binary.addTagsByFilter(keys.ownerField, undefined, ['g']);
    t.deepEqual(
      [(await fx.stored('l3'))?.tags, (await fx.stored('p2'))?.tags],
      [
        ['Y', 'g', 'm'],
        ['m', 'n'],
      ],
      'a location key tags its location only',
    );
    t.is(await binary.removeTagsByFilter(keys.ownerA, emptyFilter({ tagsFilter: { type: 0, tags: ['m'] } }), ['m']), 4);
    t.deepEqual((await fx.stored('b5'))?.tags, ['m']);
    t.deepEqual((await fx.stored('p2'))?.tags, ['n']);
    t.deepEqual(await binary.tagsByFilter(keys.ownerA, undefined), ['Y', 'f', 'g', 'n']);
  });

  test(`${backend.name}: tag changes of another organization, scope, role or dataset are refused and change nothing`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await rows(fx);
    const { binary, keys } = fx;
    t.is(await codeOf(binary.addTagsByIds(keys.ownerB, ['j1'], ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addTagsByIds(keys.ownerA, ['j1', 'b5'], ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addTagsByIds(keys.operatorA, ['j1'], ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addTagsByIds(keys.ownerField, ['j1'], ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addTagsByIds(keys.ownerA, ['j1', 'nope'], ['x'])), status.NOT_FOUND);
    t.is(await codeOf(binary.addTagsByIds(keys.ownerA, ['j1'], [datasetTag('dsB')])), status.NOT_FOUND, "org B's dataset");
    t.is(await codeOf(binary.addTagsByFilter(keys.ownerA, emptyFilter({ organizationIds: [fx.orgB] }), ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addTagsByFilter(keys.operatorA, undefined, ['x'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.removeTagsByIds(keys.ownerB, ['j1'], ['m'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.removeTagsByFilter(keys.ownerB, emptyFilter({ organizationIds: [fx.orgA] }), ['m'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.removeTagsByFilter(keys.operatorA, undefined, ['m'])), status.PERMISSION_DENIED);
    t.deepEqual(await fx.stored('j1'), { tags: ['m'], datasets: [], internal: false });
    t.is(await binary.removeTagsByFilter(keys.ownerB, undefined, ['m']), 1, 'org B removes from its own row only');
    t.deepEqual((await fx.stored('j1'))?.tags, ['m']);
  });

  test(`${backend.name}: tags by filter list binary and tabular tags, sorted by bytes, of the caller's organization only`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await rows(fx);
    const { rover, other } = fx.machines;
    for (const [org, m, tags] of [
      [fx.orgA, rover, ['t', 'Z']],
      [fx.orgB, other, ['secret']],
    ] as const) {
      await store.execute(
        `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, part_id, component_name, method_name, tags,
           time_requested, time_received, time_synced, data, internal, size_bytes)
         VALUES (1, 'u', ?, ?, ?, ?, 'sensor', 'Readings', CAST(? AS VARCHAR[]), ?, ?, ?, CAST('{}' AS JSON), false, 2)`,
        [org, m.location_id, m.machine_id, m.part_id, [...tags], new Date(), new Date(), new Date()],
      );
    }
    const { binary, keys } = fx;
    t.deepEqual(await binary.tagsByFilter(keys.ownerA, undefined), ['Z', 'm', 'n', 't']);
    t.deepEqual(await binary.tagsByFilter(keys.ownerA, emptyFilter({ mimeType: ['image/png'] })), ['m', 'n'], 'a binary-only filter leaves tabular out');
    t.deepEqual(await binary.tagsByFilter(keys.ownerB, undefined), ['m', 'secret']);
    t.is(await codeOf(binary.tagsByFilter(keys.ownerA, emptyFilter({ organizationIds: [fx.orgB] }))), status.PERMISSION_DENIED);
  });

  test(`${backend.name}: bounding boxes are checked, listed by label in byte order, removed, and refused across organizations`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await rows(fx);
    const { binary, keys } = fx;
    const dog = await binary.addBoundingBox(keys.ownerA, 'j1', box('dog'));
    await binary.addBoundingBox(keys.ownerA, 'p2', box('Zebra', [0, 0, 1, 1]));
    await binary.addBoundingBox(keys.ownerA, 'i4', box('internal-only'));
    await binary.addBoundingBox(keys.ownerB, 'b5', box('b-secret'));
    t.deepEqual(await binary.labelsByFilter(keys.ownerA, undefined), ['Zebra', 'dog']);
    t.deepEqual(await binary.labelsByFilter(keys.ownerA, emptyFilter({ mimeType: ['image/png'] })), ['Zebra']);
    t.deepEqual(await binary.labelsByFilter(keys.ownerB, undefined), ['b-secret']);
    const [j1] = await binary.byIds(keys.ownerA, ['j1'], false);
    t.deepEqual(j1.metadata?.annotations?.bboxes, [
      { id: dog, label: 'dog', xMinNormalized: 0.1, yMinNormalized: 0.2, xMaxNormalized: 0.3, yMaxNormalized: 0.4, confidence: undefined },
    ]);
    const invalid = [
      box(''),
      box('x', [-0.1, 0, 1, 1]),
      box('x', [0, 0, 1.5, 1]),
      box('x', [0.6, 0, 0.5, 1]),
      box('x', [0, 0.6, 1, 0.5]),
      box('x', [NaN, 0, 1, 1]),
    ];
    for (const b of invalid) t.is(await codeOf(binary.addBoundingBox(keys.ownerA, 'j1', b)), status.INVALID_ARGUMENT, JSON.stringify(b));
    t.is(await codeOf(binary.addBoundingBox(keys.ownerA, 'l3', box('x'))), status.INVALID_ARGUMENT, 'not an image');
    t.is(await codeOf(binary.addBoundingBox(keys.ownerA, 'nope', box('x'))), status.NOT_FOUND);
    t.is(await codeOf(binary.addBoundingBox(keys.ownerB, 'j1', box('x'))), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.addBoundingBox(keys.operatorA, 'j1', box('x'))), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.removeBoundingBox(keys.ownerB, 'j1', dog)), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.removeBoundingBox(keys.ownerA, 'p2', dog)), status.NOT_FOUND, 'the box of another datum');
    await binary.removeBoundingBox(keys.ownerA, 'j1', dog);
    t.is(await codeOf(binary.removeBoundingBox(keys.ownerA, 'j1', dog)), status.NOT_FOUND);
    t.deepEqual(await binary.labelsByFilter(keys.ownerA, undefined), ['Zebra']);
  });

  test(`${backend.name}: deletes remove rows, boxes and content (not content a dataset version froze), within the caller's rights`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await rows(fx);
    const { binary, keys } = fx;
    await binary.addBoundingBox(keys.ownerA, 'j1', box('dog'));
    await store.execute(
      `INSERT INTO dataset_version_members VALUES ('ds1', 1, 0, 'p2', 'train', CAST(? AS VARCHAR[]), CAST('[]' AS JSON), 1, 1, '.png', 'image/png', ?, 2, NULL, NULL, NULL)`,
      [[], fx.blobKey('p2')],
    );
    t.is(await codeOf(binary.deleteByIds(keys.ownerB, ['j1'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.deleteByIds(keys.operatorA, ['j1'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.deleteByIds(keys.ownerField, ['j1'])), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.deleteByFilter(keys.ownerA, emptyFilter({}), false)), status.INVALID_ARGUMENT, 'a filter must name the organization');
    t.is(await codeOf(binary.deleteByFilter(keys.ownerA, undefined, false)), status.INVALID_ARGUMENT);
    t.is(await codeOf(binary.deleteByFilter(keys.ownerA, emptyFilter({ organizationIds: [fx.orgB] }), false)), status.PERMISSION_DENIED);
    t.is(await codeOf(binary.deleteByFilter(keys.operatorA, emptyFilter({ organizationIds: [fx.orgA] }), false)), status.PERMISSION_DENIED);
    t.truthy(await fx.stored('j1'), 'nothing was deleted by the refused calls');

    t.is(await binary.deleteByIds(keys.ownerA, ['j1', 'nope', 'p2']), 2, 'unknown ids are skipped');
    t.is(await fx.stored('j1'), undefined);
    t.deepEqual(await store.query("SELECT id FROM bounding_boxes WHERE binary_data_id = 'j1'"), []);
    t.false(await blobExists(store, fx, 'j1'));
    t.true(await blobExists(store, fx, 'p2'), 'a frozen version keeps its content');
    // By filter: internal data only when asked; another organization's rows never.
    t.is(await binary.deleteByFilter(keys.ownerA, emptyFilter({ organizationIds: [fx.orgA] }), false), 1);
    t.truthy(await fx.stored('i4'));
    t.is(await binary.deleteByFilter(keys.ownerA, emptyFilter({ organizationIds: [fx.orgA] }), true), 1);
    t.is(await fx.stored('i4'), undefined);
    t.false(await blobExists(store, fx, 'l3'));
    t.truthy(await fx.stored('b5'));
    t.true(await blobExists(store, fx, 'b5'));
  });
}
