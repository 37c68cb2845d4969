// Every dataset operation and its rules, through the client against a spawned platform-cloud.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import type { DataClient } from '../client/data-client.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';

let fx: CloudFixture;
let data: DataClient;
const times = () => [new Date(), new Date()] as [Date, Date];

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
});
test.after.always(async () => fx?.close());

const image = (name: string) => data.binaryDataCaptureUpload(Buffer.from(name), fx.machineA1.part_id, 'cam', name, 'GetImages', '.jpg', times(), ['base']);

test.serial('create, list by organization and by ids, rename', async (t) => {
  const id = await data.createDataset('birds', fx.orgA);
  const listed = await data.listDatasetsByOrganizationID(fx.orgA);
  const ds = listed.find((d) => d.id === id)!;
  t.like(ds, { id, name: 'birds', organizationId: fx.orgA });
  t.true(ds.timeCreated instanceof Date);
  await data.renameDataset(id, 'more birds');
  t.deepEqual(
    (await data.listDatasetsByIds([id])).map((d) => d.name),
    ['more birds'],
  );
  t.is(codeOf(await t.throwsAsync(data.createDataset('more birds', fx.orgA))), status.ALREADY_EXISTS);
  t.is(codeOf(await t.throwsAsync(data.createDataset('', fx.orgA))), status.INVALID_ARGUMENT);
  t.is(codeOf(await t.throwsAsync(data.renameDataset(id, ''))), status.INVALID_ARGUMENT);
  t.is(codeOf(await t.throwsAsync(data.listDatasetsByIds([]))), status.INVALID_ARGUMENT);
  t.is(codeOf(await t.throwsAsync(data.listDatasetsByIds(['missing']))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.renameDataset('missing', 'x'))), status.NOT_FOUND);
});

test.serial('adding data tags it PLATFORM_DATASET_{id} and records the id; removing undoes both', async (t) => {
  const id = await data.createDataset('cats', fx.orgA);
  const a = await image('cat-a');
  const b = await image('cat-b');
  await data.addBinaryDataToDatasetByIds([a, b], id);
  const [ra] = await data.binaryDataByIds([a], { includeBinary: false });
  t.deepEqual(ra.metadata.datasetIds, [id]);
  t.deepEqual(ra.metadata.captureMetadata!.tags, ['PLATFORM_DATASET_' + id, 'base'].sort());
  t.deepEqual((await data.binaryDataByFilter({ datasetId: id })).data.map((d) => d.metadata.binaryDataId).sort(), [a, b].sort());
  // Adding twice changes nothing.
  await data.addBinaryDataToDatasetByIds([a], id);
  t.deepEqual((await data.binaryDataByIds([a]))[0].metadata.datasetIds, [id]);
  await data.removeBinaryDataFromDatasetByIds([a], id);
  const [after] = await data.binaryDataByIds([a]);
  t.deepEqual(after.metadata.datasetIds, []);
  t.deepEqual(after.metadata.captureMetadata!.tags, ['base']);
  t.deepEqual(
    (await data.binaryDataByFilter({ datasetId: id })).data.map((d) => d.metadata.binaryDataId),
    [b],
  );
  t.is(codeOf(await t.throwsAsync(data.addBinaryDataToDatasetByIds([], id))), status.INVALID_ARGUMENT);
  t.is(codeOf(await t.throwsAsync(data.addBinaryDataToDatasetByIds([a], 'missing'))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.addBinaryDataToDatasetByIds(['missing'], id))), status.NOT_FOUND);
});

test.serial("adding or removing a dataset's tag directly changes the membership as well", async (t) => {
  const id = await data.createDataset('by-tag', fx.orgA);
  const tag = `PLATFORM_DATASET_${id}`;
  const a = await image('tag-a');
  const b = await image('tag-b');
  const membership = async (bin: string) => {
    const [record] = await data.binaryDataByIds([bin], { includeBinary: false });
    return { datasetIds: record.metadata.datasetIds, tags: record.metadata.captureMetadata!.tags };
  };
  await data.addTagsToBinaryDataByIds([tag], [a]);
  t.deepEqual(await membership(a), { datasetIds: [id], tags: [tag, 'base'].sort() });
  await data.addTagsToBinaryDataByFilter([tag], { componentName: 'tag-b' });
  t.deepEqual((await membership(b)).datasetIds, [id]);
  t.deepEqual((await data.binaryDataByFilter({ datasetId: id })).data.map((d) => d.metadata.binaryDataId).sort(), [a, b].sort());
  await data.removeTagsFromBinaryDataByIds([tag], [a]);
  t.deepEqual(await membership(a), { datasetIds: [], tags: ['base'] });
  await data.removeTagsFromBinaryDataByFilter([tag], { componentName: 'tag-b' });
  t.deepEqual(await membership(b), { datasetIds: [], tags: ['base'] });
  t.deepEqual((await data.binaryDataByFilter({ datasetId: id })).data, []);
  // A membership tag must name a dataset of the organization, as dataset_ids of an upload must.
  t.is(codeOf(await t.throwsAsync(data.addTagsToBinaryDataByIds(['PLATFORM_DATASET_missing'], [a]))), status.NOT_FOUND);
  t.deepEqual(await membership(a), { datasetIds: [], tags: ['base'] });
});

test.serial('uploads may name datasets, which tags them like adding does', async (t) => {
  const id = await data.createDataset('uploaded', fx.orgA);
  const bin = await data.binaryDataCaptureUpload(Buffer.from('u'), fx.machineA1.part_id, 'cam', 'u', 'GetImages', '.png', times(), [], { datasetIds: [id] });
  const [record] = await data.binaryDataByIds([bin]);
  t.deepEqual(record.metadata.datasetIds, [id]);
  t.true(record.metadata.captureMetadata!.tags.includes(`PLATFORM_DATASET_${id}`));
  const err = await t.throwsAsync(data.fileUpload(Buffer.from('u'), fx.machineA1.part_id, { fileName: 'u.txt', datasetIds: ['missing'] }));
  t.is(codeOf(err), status.NOT_FOUND);
});

test.serial("an upload tagged with another organization's or a missing dataset is refused NOT_FOUND, naming the tag, and stores nothing", async (t) => {
  const foreign = await fx.client(fx.keys.ownerB).dataClient.createDataset('theirs', fx.orgB);
  const part = fx.machineA1.part_id;
  for (const tag of [`PLATFORM_DATASET_${foreign}`, 'PLATFORM_DATASET_missing']) {
    const tags = ['base', tag];
    const uploads: [string, () => Promise<unknown>][] = [
      ['binary', () => data.binaryDataCaptureUpload(Buffer.from('x'), part, 'cam', 'refused-tag', 'GetImages', '.jpg', times(), tags)],
      ['file', () => data.fileUpload(Buffer.from('x'), part, { componentName: 'refused-tag', fileName: 'x.txt', tags })],
      ['streaming', () => data.streamingDataCaptureUpload(Buffer.from('x'), part, '.png', { componentName: 'refused-tag', tags })],
      ['tabular', () => data.tabularDataCaptureUpload([{ readings: { a: 1 } }], part, 'rdk:component:sensor', 'refused-tag', 'Readings', [times()], tags)],
    ];
    for (const [kind, upload] of uploads) {
      const err = await t.throwsAsync(upload());
      t.is(codeOf(err), status.NOT_FOUND, `${kind} upload tagged ${tag}`);
      t.true(err!.message.includes(tag), `${kind}: ${err!.message}`);
    }
  }
  t.deepEqual((await data.binaryDataByFilter({ componentName: 'refused-tag' })).data, []);
  t.deepEqual((await data.tabularDataByFilter({ componentName: 'refused-tag' })).data, []);
});

test.serial("an upload tagged with its own organization's dataset joins it, dataset_ids included", async (t) => {
  const id = await data.createDataset('tagged-upload', fx.orgA);
  const tag = `PLATFORM_DATASET_${id}`;
  const part = fx.machineA1.part_id;
  const ids = [
    await data.binaryDataCaptureUpload(Buffer.from('b'), part, 'cam', 'own-tag', 'GetImages', '.jpg', times(), [tag]),
    await data.fileUpload(Buffer.from('f'), part, { componentName: 'own-tag', fileName: 'f.txt', tags: [tag] }),
    await data.streamingDataCaptureUpload(Buffer.from('s'), part, '.png', { componentName: 'own-tag', tags: [tag] }),
  ];
  for (const record of await data.binaryDataByIds(ids, { includeBinary: false })) {
    t.deepEqual(record.metadata.datasetIds, [id]);
    t.deepEqual(record.metadata.captureMetadata!.tags, [tag]);
  }
  t.deepEqual((await data.binaryDataByFilter({ datasetId: id })).data.map((d) => d.metadata.binaryDataId).sort(), [...ids].sort());
});

test.serial('deleting a dataset removes its membership from the data', async (t) => {
  const id = await data.createDataset('doomed', fx.orgA);
  const a = await image('doomed-a');
  await data.addBinaryDataToDatasetByIds([a], id);
  await data.deleteDataset(id);
  const [record] = await data.binaryDataByIds([a]);
  t.deepEqual(record.metadata.datasetIds, []);
  t.deepEqual(record.metadata.captureMetadata!.tags, ['base']);
  t.false((await data.listDatasetsByOrganizationID(fx.orgA)).some((d) => d.id === id));
  t.is(codeOf(await t.throwsAsync(data.deleteDataset(id))), status.NOT_FOUND);
});

test.serial('merging datasets creates one holding the union', async (t) => {
  const d1 = await data.createDataset('m1', fx.orgA);
  const d2 = await data.createDataset('m2', fx.orgA);
  const a = await image('merge-a');
  const b = await image('merge-b');
  await data.addBinaryDataToDatasetByIds([a], d1);
  await data.addBinaryDataToDatasetByIds([a, b], d2);
  const merged = await data.mergeDatasets([d1, d2], 'merged', fx.orgA);
  t.deepEqual((await data.binaryDataByFilter({ datasetId: merged })).data.map((d) => d.metadata.binaryDataId).sort(), [a, b].sort());
  t.is(codeOf(await t.throwsAsync(data.mergeDatasets([], 'x', fx.orgA))), status.INVALID_ARGUMENT);
});
