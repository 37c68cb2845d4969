// Datasets and their membership tags, frozen versions and the dataset check of uploads, on both
// TabularStore backends: the embedded DuckDB store and PostgreSQL (issue 33). The gRPC service around
// these (dataset.test.ts, dataset-versions.test.ts) runs on the embedded store.
import { Metadata, status } from '@grpc/grpc-js';
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { Authorizer } from '../auth/authorizer.js';
import { TokenSigner } from '../auth/token.js';
import { datasetTag, missingDatasets } from '../data/dataset-tag.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf as codeOf } from '../testing/tenancy-fixture.js';
import { Datasets } from './dataset-service.js';
import { DatasetVersions } from './dataset-versions.js';

const backends = tabularBackends(test);

/** A PNG header of the given size: all that the members' image sizes read. */
function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

async function fixture(store: StoreWithBlobs) {
  const org = await createOrganization(store, { name: 'data' });
  const machine = await createMachine(store, { org: org.id, name: 'rover' });
  const owner = await createKey(store, { org: org.id, role: 'owner' });
  const operator = await createKey(store, { org: org.id, role: 'operator' });
  const tokens = new TokenSigner(randomBytes(32));
  const authorizer = new Authorizer(store, tokens);
  const md = (keyId: string) => {
    const m = new Metadata();
    m.set('authorization', `Bearer ${tokens.sign(keyId, 'api-key')}`);
    return m;
  };
  /** A binary datum with image content in the blob store. */
  const image = async (id: string, tags: string[], size = 8) => {
    await store.blobs.put(`${org.id}/${id}`, png(size, size / 2));
    await store.execute(
      `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, part_id, component_name, mime_type, file_ext,
         tags, dataset_ids, time_requested, file_size_bytes, blob_key)
       VALUES (1, ?, ?, ?, ?, ?, 'cam', 'image/png', '.png', CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), ?, 33, ?)`,
      [id, org.id, machine.location_id, machine.machine_id, machine.part_id, tags, [], new Date('2026-11-27T00:00:00Z'), `${org.id}/${id}`],
    );
  };
  const membership = async (id: string) => {
    const [row] = await store.query('SELECT tags, dataset_ids FROM binary_data WHERE binary_data_id = ?', [id]);
    return { tags: row.tags, datasets: row.dataset_ids };
  };
  return { org, datasets: new Datasets(store, authorizer), owner: md(owner.id), operator: md(operator.id), image, membership };
}

for (const backend of backends) {
  test(`${backend.name}: datasets are made, renamed, listed and refused with the rule named`, async (t) => {
    const store = await backend.open(t);
    const { org, datasets, owner, operator } = await fixture(store);
    const a = await datasets.create(owner, 'a', org.id);
    const b = await datasets.create(owner, 'b', org.id);
    t.is(await codeOf(datasets.create(owner, 'a', org.id)), status.ALREADY_EXISTS);
    t.is(await codeOf(datasets.create(operator, 'c', org.id)), status.PERMISSION_DENIED);
    await datasets.rename(owner, b, 'bee');
    t.deepEqual(
      (await datasets.listByOrganization(operator, org.id)).map((d) => [d.id, d.name, d.organizationId, d.timeCreated instanceof Date]),
      [
        [a, 'a', org.id, true],
        [b, 'bee', org.id, true],
      ],
    );
    t.deepEqual(
      (await datasets.listByIds(owner, [b])).map((d) => d.name),
      ['bee'],
    );
    t.is(await codeOf(datasets.listByIds(owner, [b, 'nope'])), status.NOT_FOUND);
    t.deepEqual(await missingDatasets(store, org.id, [a, 'nope', b]), ['nope']);
    t.deepEqual(await missingDatasets(store, 'other-org', [a]), [a], "another organization's dataset");
  });

  test(`${backend.name}: adding and removing data keeps dataset_ids and the membership tag together; delete and merge`, async (t) => {
    const store = await backend.open(t);
    const { org, datasets, owner, operator, image, membership } = await fixture(store);
    await image('i1', ['zebra', 'cat']);
    await image('i2', []);
    const a = await datasets.create(owner, 'a', org.id);
    const b = await datasets.create(owner, 'b', org.id);
    await datasets.addData(owner, ['i1', 'i2'], a);
    await datasets.addData(owner, ['i1'], a);
    await datasets.addData(owner, ['i1'], b);
    const [first, second] = [a, b].sort();
    t.deepEqual(await membership('i1'), {
      tags: [datasetTag(first), datasetTag(second), 'cat', 'zebra'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
      datasets: [first, second],
    });
    t.deepEqual(await membership('i2'), { tags: [datasetTag(a)], datasets: [a] });
    t.is(await codeOf(datasets.addData(operator, ['i1'], a)), status.PERMISSION_DENIED);
    t.is(await codeOf(datasets.addData(owner, ['i1', 'missing'], a)), status.NOT_FOUND);

    const merged = await datasets.merge(owner, [a, b], 'ab', org.id);
    t.true(((await membership('i2')).datasets as string[]).includes(merged), 'the merged dataset holds the data of both');

    await datasets.removeData(owner, ['i1'], a);
    t.false(((await membership('i1')).datasets as string[]).includes(a));
    t.false(((await membership('i1')).tags as string[]).includes(datasetTag(a)));
    await datasets.delete(owner, b);
    t.is(await codeOf(datasets.load(b)), status.NOT_FOUND);
    t.deepEqual(
      ((await membership('i1')).tags as string[]).filter((tag) => !tag.startsWith('PLATFORM_DATASET_')),
      ['cat', 'zebra'],
    );
    t.false(((await membership('i1')).datasets as string[]).includes(b));
  });

  test(`${backend.name}: a version freezes members, tags, sizes and split; later changes leave it; deleting the dataset deletes it`, async (t) => {
    const store = await backend.open(t);
    const { org, datasets, owner, image } = await fixture(store);
    await image('i1', ['cat'], 8);
    await image('i2', ['dog'], 16);
    const id = await datasets.create(owner, 'v', org.id);
    await datasets.addData(owner, ['i1', 'i2'], id);
    const versions = new DatasetVersions(store);
    const spec = { train: 0.5, valid: 0.5, test: 0, seed: 7 };
    const [v1, v2] = await Promise.all([versions.create({ id, organizationId: org.id }, spec), versions.create({ id, organizationId: org.id }, spec)]);
    t.deepEqual([v1.version, v2.version].sort(), [1, 2], 'two versions made at once get their own numbers');
    t.like(v1, { datasetId: id, imageCount: 2, labels: ['cat', 'dog'], split: { train: 0.5, valid: 0.5, test: 0, seed: 7 } });
    t.is(v1.trainCount + v1.validCount + v1.testCount, 2);
    await datasets.removeData(owner, ['i2'], id);
    const members = await versions.members(id, 1);
    t.deepEqual(
      members.map((m) => [m.binaryDataId, m.tags, m.width, m.height, m.partId !== '', m.timeRequested?.toISOString()]),
      [
        ['i1', ['cat'], 8, 4, true, '2026-11-27T00:00:00.000Z'],
        ['i2', ['dog'], 16, 8, true, '2026-11-27T00:00:00.000Z'],
      ],
    );
    t.is((await versions.create({ id, organizationId: org.id }, spec)).imageCount, 1, 'a new version sees the removal');
    t.deepEqual(
      (await versions.list(id)).map((v) => v.version),
      [1, 2, 3],
    );
    await datasets.delete(owner, id);
    t.deepEqual(await versions.list(id), []);
    t.is(await codeOf(versions.members(id, 1)), status.NOT_FOUND);
  });
}
