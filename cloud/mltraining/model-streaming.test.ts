// Model files leave the blob store as streams (BlobStore.getStream), never as one buffer: the package
// digest is hashed chunk by chunk, DownloadPackageFile sends what it reads, and a download the client
// cancels closes its read of the store. The blob store here refuses whole reads (get), so any path that
// still reads a model whole fails. The whole files through the real clients and both modes:
// scripts/e2e/model-download.test.ts.
import { Server, ServerCredentials, credentials, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { PackageServiceClient } from '../../gen/platform/app/packages/v1/packages.js';
import { FileBlobStore } from '../store/blob-store.js';
import { Store } from '../store/store.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { ModelArtefactStore } from './model-artefacts.js';
import { addPackageService } from './package-service.js';
import { ensureTrainingTables } from './training-tables.js';

const org = 'org-streaming';
const modelBytes = 6 * 1024 * 1024 + 99;

/** A file store whose get() refuses model files, and which keeps the streams it hands out. */
class StreamOnlyBlobs extends FileBlobStore {
  readonly streams: Readable[] = [];
  override async get(key: string, sizeHint?: number): Promise<Buffer | undefined> {
    if (key.includes('/models/')) throw new Error(`a model file was read whole: ${key}`);
    return super.get(key, sizeHint);
  }
  override async getStream(key: string): Promise<Readable | undefined> {
    const stream = await super.getStream(key);
    if (stream) this.streams.push(stream);
    return stream;
  }
}

test('the package digest and DownloadPackageFile stream the model; a cancelled download closes its read', async (t) => {
  const dir = tempDataDir();
  t.teardown(() => removeDataDir(dir));
  const blobs = new StreamOnlyBlobs(join(dir, 'blobs'));
  const store = await Store.open(dir, { readers: 1, insertLanes: 0, blobs });
  t.teardown(() => store.close());
  await ensureTrainingTables(store);
  const artefacts = new ModelArtefactStore(store);
  const out = mkdtempSync(join(dir, 'out-'));
  const model = randomBytes(modelBytes);
  writeFileSync(join(out, 'model.onnx'), model);
  const { artefact } = await artefacts.upload(out, { organizationId: org, modelName: 'm', modelVersion: 'v1', trainingJobId: 'j', validationMetrics: {} });
  await store.transact((tx) => artefacts.record(tx, artefact));

  const server = new Server();
  addPackageService(server, artefacts, { organizationOf: async () => org });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  t.teardown(() => server.forceShutdown());
  const client = new PackageServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  t.teardown(() => client.close());

  const info = await new Promise<{ files: { name: string; sha256: string }[] }>((resolve, reject) =>
    client.getPackage({ packageId: `${org}/m`, version: 'v1', type: '' }, (err, res) => (err ? reject(err) : resolve(res.package!))),
  );
  t.is(info.files[0].sha256, createHash('sha256').update(model).digest('hex'), 'the digest, hashed as the file was read');

  const chunks: Buffer[] = [];
  for await (const m of client.downloadPackageFile({ packageId: `${org}/m`, version: 'v1', fileName: 'model.onnx' })) chunks.push(Buffer.from(m.chunk));
  t.true(Buffer.concat(chunks).equals(model), 'the download is the file');
  t.true(chunks.length > 1);

  // A client that takes one message and goes away: the server's read of the store is closed.
  const before = blobs.streams.length;
  const call = client.downloadPackageFile({ packageId: `${org}/m`, version: 'v1', fileName: 'model.onnx' });
  await new Promise<void>((resolve) => call.once('data', () => resolve()));
  call.cancel();
  await new Promise<void>((resolve) => call.once('error', (err: ServiceError) => void err).once('close', resolve));
  const read = await waitFor('the download’s read of the store', () => blobs.streams[before]);
  await waitFor('the read to be closed', () => read.destroyed, 30_000);
  t.pass();
});
