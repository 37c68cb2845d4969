// A model file of several MiB downloaded from the real platform-cloud, in both modes: the embedded
// default (files on local disk) and the scale-out mode (PostgreSQL and S3 on s3rver, issue 33). The cloud
// streams the file from its blob store (BlobStore.getStream) rather than reading it whole, and hashes it
// as it reads; here the clients a machine and a user really use get it back byte for byte: the machine's
// package source (GetPackage's sha256, then DownloadPackageFile) and the user's training client
// (DownloadModelArtefact).
import test, { type ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKey, createMachine, createOrganization } from '../../cloud/admin/tenancy.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { ModelArtefactStore } from '../../cloud/mltraining/model-artefacts.js';
import { ensureTrainingTables } from '../../cloud/mltraining/training-tables.js';
import { Store } from '../../cloud/store/store.js';
import type { StoreWithBlobs } from '../../cloud/store/tabular.js';
import { startScaleOutBackends, spawnScaleOutCloud } from '../../cloud/testing/scale-out.js';
import { removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { CloudPackageSource } from '../../core/packages/cloud-package-source.js';

/** Many S3 body reads and many 256 KiB messages, and not a multiple of either. */
const modelBytes = 24 * 1024 * 1024 + 4321;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Tenant {
  org: string;
  part: { part_id: string; part_secret: string };
  key: { id: string; key: string };
  model: Buffer;
}

/** An organization with a machine and an owner key, and a stored model `big` v1 whose model.onnx is `modelBytes` of random bytes. */
async function storeTenant(store: StoreWithBlobs): Promise<Tenant> {
  const org = (await createOrganization(store, { name: 'downloads' })).id;
  const part = await createMachine(store, { org, name: 'rover' });
  const key = await createKey(store, { org, role: 'owner' });
  const model = randomBytes(modelBytes);
  const out = mkdtempSync(join(tmpdir(), 'model-download-'));
  try {
    writeFileSync(join(out, 'model.onnx'), model);
    writeFileSync(join(out, 'labels.txt'), 'a\nb\n');
    await ensureTrainingTables(store);
    const artefacts = new ModelArtefactStore(store);
    const { artefact } = await artefacts.upload(out, {
      organizationId: org,
      modelName: 'big',
      modelVersion: 'v1',
      trainingJobId: 'job-big',
      validationMetrics: {},
    });
    await store.transact((tx) => artefacts.record(tx, artefact));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return { org, part, key, model };
}

async function expectDownloads(t: ExecutionContext, cloud: SpawnedCloud, tenant: Tenant): Promise<void> {
  const want = sha256(tenant.model);
  const source = new CloudPackageSource({
    partId: tenant.part.part_id,
    appAddress: cloud.address,
    credentials: { type: 'robot-secret', entity: tenant.part.part_id, payload: tenant.part.part_secret },
    allowInsecure: false,
  });
  t.teardown(() => source.close());
  const release = await source.resolve(`${tenant.org}/big`, 'v1');
  const file = release.files.find((f) => f.name === 'model.onnx');
  t.deepEqual([file?.sha256, file?.size], [want, modelBytes], 'GetPackage: the digest hashed while streaming is the content’s');
  const hash = createHash('sha256');
  let size = 0;
  let chunks = 0;
  for await (const chunk of source.download(`${tenant.org}/big`, 'v1', 'model.onnx')) {
    hash.update(chunk);
    size += chunk.byteLength;
    chunks++;
  }
  t.deepEqual([hash.digest('hex'), size], [want, modelBytes], 'DownloadPackageFile: the whole file, identical');
  t.true(chunks > 1, `the file arrives in several messages, got ${chunks}`);

  const user = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: tenant.key.id, payload: tenant.key.key } });
  t.teardown(() => user.close());
  const downloaded = await user.mlTrainingClient.downloadModelArtefact(tenant.org, 'big', 'v1', 'model.onnx');
  t.true(downloaded.equals(tenant.model), `DownloadModelArtefact: ${downloaded.byteLength} bytes, identical to the ${modelBytes} stored`);
  t.is((await user.mlTrainingClient.downloadModelArtefact(tenant.org, 'big', 'v1', 'labels.txt')).toString(), 'a\nb\n');
}

test('embedded: a multi-MiB model file downloads whole through the package source and the training client', async (t) => {
  const dataDir = tempDataDir();
  t.teardown(() => removeDataDir(dataDir));
  // The store is the cloud's own data dir: set up before the cloud opens it (one process at a time).
  const store = await Store.open(dataDir, { readers: 1, insertLanes: 1 });
  let tenant: Tenant;
  try {
    tenant = await storeTenant(store);
  } finally {
    await store.close();
  }
  const cloud = await spawnCloud(dataDir);
  t.teardown(() => cloud.stop());
  await expectDownloads(t, cloud, tenant);
});

test('scale-out: a multi-MiB model file downloads whole from S3 through the package source and the training client', async (t) => {
  const backends = await startScaleOutBackends();
  t.teardown(() => backends.stop());
  const cloud = await spawnScaleOutCloud(backends);
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(cloud.dataDir);
  });
  // After the cloud started: its migrations made the tables.
  const tenant = await storeTenant(await backends.openTables());
  await expectDownloads(t, cloud, tenant);
});
