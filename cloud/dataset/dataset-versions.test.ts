// Dataset versions through the TypeScript client against a spawned platform-cloud: numbering, frozen
// members, the split, permissions, and training jobs that name a version or get one made for them.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import type { DataClient } from '../client/data-client.js';
import { ModelType } from '../../gen/platform/app/mltraining/v1/ml_training.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyPng } from '../web/testing-images.js';

let fx: CloudFixture;
let data: DataClient;
const times = () => [new Date(), new Date()] as [Date, Date];

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
});
test.after.always(async () => fx?.close());

const png = (name: string, w = 64, h = 48) =>
  data.binaryDataCaptureUpload(noisyPng(w, h), fx.machineA1.part_id, 'camera', name, 'GetImages', '.png', times(), ['cat']);

test.serial('versions are numbered per dataset and freeze members, tags, boxes, sizes and the split', async (t) => {
  const id = await data.createDataset('frozen', fx.orgA);
  const a = await png('va', 640, 480);
  const b = await png('vb', 32, 16);
  await data.addBinaryDataToDatasetByIds([a, b], id);
  const box = await data.addBoundingBoxToImageById(a, 'dog', 0.1, 0.2, 0.5, 0.6);
  const v1 = await data.createDatasetVersion(id, { train: 0.5, valid: 0.5, test: 0, seed: 7 });
  t.like(v1, { datasetId: id, version: 1, organizationId: fx.orgA, imageCount: 2, trainCount: 1, validCount: 1, testCount: 0, labels: ['cat', 'dog'] });
  t.deepEqual(v1.split, { train: 0.5, valid: 0.5, test: 0, seed: 7 });
  const before = await data.getDatasetVersion(id, 1);
  const ma = before.members.find((m) => m.binaryDataId === a)!;
  t.like(ma, { width: 640, height: 480, fileExt: '.png', tags: ['cat'] });
  t.deepEqual(
    ma.boundingBoxes.map((x) => [x.id, x.label, x.xMinNormalized, x.yMinNormalized, x.xMaxNormalized, x.yMaxNormalized]),
    [[box, 'dog', 0.1, 0.2, 0.5, 0.6]],
  );
  t.like(
    before.members.find((m) => m.binaryDataId === b),
    { width: 32, height: 16 },
  );

  // Edits of the live data leave version 1 as it was.
  await data.addTagsToBinaryDataByIds(['new-tag'], [a]);
  await data.removeBoundingBoxFromImageById(a, box);
  await data.addBoundingBoxToImageById(b, 'bird', 0, 0, 1, 1);
  const c = await png('vc');
  await data.addBinaryDataToDatasetByIds([c], id);
  await data.removeBinaryDataFromDatasetByIds([b], id);
  t.deepEqual(await data.getDatasetVersion(id, 1), before);

  const v2 = await data.createDatasetVersion(id, { train: 0.5, valid: 0.5, test: 0, seed: 7 });
  t.is(v2.version, 2);
  t.deepEqual(v2.labels, ['cat', 'new-tag']);
  t.deepEqual(
    (await data.listDatasetVersions(id)).map((v) => v.version),
    [1, 2],
  );
  // Deleting a frozen datum leaves the version whole.
  await data.deleteBinaryDataByIds([b]);
  t.deepEqual(await data.getDatasetVersion(id, 1), before);
});

test.serial('the same members and seed give the same split', async (t) => {
  const id = await data.createDataset('splits', fx.orgA);
  const ids = [];
  for (let i = 0; i < 12; i++) ids.push(await png(`split-${i}`, 8, 8));
  await data.addBinaryDataToDatasetByIds(ids, id);
  const split = { train: 0.5, valid: 0.25, test: 0.25, seed: 1234 };
  const one = await data.createDatasetVersion(id, split);
  const two = await data.createDatasetVersion(id, split);
  t.like(one, { trainCount: 6, validCount: 3, testCount: 3 });
  const parts = async (v: number) =>
    (await data.getDatasetVersion(id, v)).members
      .map((m) => `${m.binaryDataId}:${m.split}`)
      .sort()
      .join(',');
  t.is(await parts(one.version), await parts(two.version));
  const other = await data.createDatasetVersion(id, { ...split, seed: 99 });
  t.not(await parts(other.version), await parts(one.version));
  // No split: 0.7/0.2/0.1.
  t.deepEqual((await data.createDatasetVersion(id)).split, { train: 0.7, valid: 0.2, test: 0.1, seed: 0 });
});

test.serial('bad requests and permissions', async (t) => {
  const id = await data.createDataset('rules', fx.orgA);
  const bad = await t.throwsAsync(data.createDatasetVersion(id, { train: 0.6, valid: 0.6, test: 0 }));
  t.is(codeOf(bad), status.INVALID_ARGUMENT);
  t.regex(bad!.message, /split\.train \+ split\.valid \+ split\.test must be 1/);
  t.is(codeOf(await t.throwsAsync(data.createDatasetVersion('missing'))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.getDatasetVersion(id, 5))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.getDatasetVersion(id, 0))), status.INVALID_ARGUMENT);
  const operator = fx.client(fx.keys.operatorA).dataClient;
  t.is(codeOf(await t.throwsAsync(operator.createDatasetVersion(id))), status.PERMISSION_DENIED);
  await data.createDatasetVersion(id);
  t.is((await operator.listDatasetVersions(id)).length, 1);
  const other = fx.client(fx.keys.ownerB).dataClient;
  t.is(codeOf(await t.throwsAsync(other.listDatasetVersions(id))), status.PERMISSION_DENIED);
  // A key narrower than the organization must hold every image's part in its scope.
  const scoped = await data.createDataset('scoped-versions', fx.orgA);
  await data.addBinaryDataToDatasetByIds([await png('scope-a1')], scoped);
  const loc = fx.client(fx.keys.ownerLocA1).dataClient;
  t.is((await loc.createDatasetVersion(scoped)).version, 1);
  t.is((await loc.getDatasetVersion(scoped, 1)).members.length, 1);
  const inA2 = await data.binaryDataCaptureUpload(noisyPng(8, 8), fx.machineA2.part_id, 'camera', 'scope-a2', 'GetImages', '.png', times());
  await data.addBinaryDataToDatasetByIds([inA2], scoped);
  const outside = await t.throwsAsync(loc.createDatasetVersion(scoped));
  t.is(codeOf(outside), status.PERMISSION_DENIED);
  t.true(outside!.message.includes(fx.machineA2.part_id), outside!.message);
  await data.createDatasetVersion(scoped);
  t.is(codeOf(await t.throwsAsync(loc.getDatasetVersion(scoped, 2))), status.PERMISSION_DENIED);
  // Deleting the dataset deletes its versions.
  await data.deleteDataset(id);
  t.is(codeOf(await t.throwsAsync(data.listDatasetVersions(id))), status.NOT_FOUND);
});

test.serial('a training job records the version it names, or the one made for it', async (t) => {
  const ml = fx.client(fx.keys.ownerA).mlTrainingClient;
  const id = await data.createDataset('to-train', fx.orgA);
  await data.addBinaryDataToDatasetByIds([await png('train-a'), await png('train-b')], id);
  const named = await data.createDatasetVersion(id);
  const jobA = await ml.submitTrainingJob(fx.orgA, id, 'versioned', '1', ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION, ['cat'], {}, named.version);
  t.is((await ml.getTrainingJob(jobA)).datasetVersion, named.version);
  const jobB = await ml.submitTrainingJob(fx.orgA, id, 'versioned', '2', ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION, ['cat']);
  const made = (await ml.getTrainingJob(jobB)).datasetVersion;
  t.is(made, named.version + 1);
  t.is((await data.getDatasetVersion(id, made)).members.length, 2);
  const missing = await t.throwsAsync(ml.submitTrainingJob(fx.orgA, id, 'versioned', '3', ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION, ['cat'], {}, 40));
  t.is(codeOf(missing), status.NOT_FOUND);
  for (const job of [jobA, jobB]) await ml.cancelTrainingJob(job).catch(() => undefined);
});
