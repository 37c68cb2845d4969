// The permission matrix: for every RPC of DataSyncService, DataService and DatasetService, a call
// without a token, with a bad token, with another organization's key, as an operator and as an owner.
import { credentials, Metadata, status } from '@grpc/grpc-js';
import test, { type ExecutionContext } from 'ava';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataClient } from '../client/data-client.js';
import type { CloudConnection } from '../client/connection.js';
import { TokenSigner } from '../auth/token.js';
import { rawZip } from '../dataset/testing/raw-zip.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyPng } from '../web/testing-images.js';

let fx: CloudFixture;
let owner: DataClient;
const sensor = 'rdk:component:sensor';
const now = () => [new Date(), new Date()] as [Date, Date];

test.before(async () => {
  fx = await startFixture();
  owner = fx.client(fx.keys.ownerA).dataClient;
});
test.after.always(async () => fx?.close());

/** A DataClient that sends fixed metadata instead of authenticating. */
function clientWithMetadata(md: Metadata): DataClient {
  return new DataClient({ address: fx.cloud.address, channel: credentials.createInsecure(), metadata: async () => md } as unknown as CloudConnection);
}
const bearer = (token: string) => {
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
};

interface Setup {
  binaryId: string;
  imageId: string;
  bboxId: string;
  datasetId: string;
  unique: string;
}

let counter = 0;
async function setup(): Promise<Setup> {
  const unique = `perm-${++counter}`;
  const binaryId = await owner.binaryDataCaptureUpload(Buffer.from('b'), fx.machineA1.part_id, 'rdk:component:camera', unique, 'GetImages', '.jpg', now(), [
    't',
  ]);
  const imageId = await owner.binaryDataCaptureUpload(Buffer.from('i'), fx.machineA1.part_id, 'rdk:component:camera', unique, 'GetImages', '.png', now());
  const bboxId = await owner.addBoundingBoxToImageById(imageId, 'cat', 0, 0, 1, 1);
  const datasetId = await owner.createDataset(`ds-${unique}`, fx.orgA);
  await owner.addBinaryDataToDatasetByIds([binaryId], datasetId);
  return { binaryId, imageId, bboxId, datasetId, unique };
}

type Kind = 'upload' | 'read' | 'write' | 'org-read' | 'org-owner';

interface Rpc {
  name: string;
  kind: Kind;
  /** Calls that need the SQL/MQL engine may answer UNAVAILABLE when it is not registered. */
  engine?: boolean;
  run(c: DataClient, s: Setup): Promise<unknown>;
}

const orgA = () => ({ organizationIds: [fx.orgA] });
const rpcs: Rpc[] = [
  {
    name: 'DataCaptureUpload',
    kind: 'upload',
    run: (c) => c.tabularDataCaptureUpload([{ readings: { a: 1 } }], fx.machineA1.part_id, sensor, 's', 'Readings', [now()]),
  },
  { name: 'FileUpload', kind: 'upload', run: (c) => c.fileUpload(Buffer.from('f'), fx.machineA1.part_id, { fileName: 'f.txt' }) },
  { name: 'StreamingDataCaptureUpload', kind: 'upload', run: (c) => c.streamingDataCaptureUpload(Buffer.from('s'), fx.machineA1.part_id, '.bin') },
  { name: 'TabularDataByFilter', kind: 'read', run: (c) => c.tabularDataByFilter(orgA()) },
  { name: 'TabularDataBySQL', kind: 'org-read', engine: true, run: (c) => c.tabularDataBySQL(fx.orgA, 'SELECT 1 AS one') },
  { name: 'TabularDataByMQL', kind: 'org-read', engine: true, run: (c) => c.tabularDataByMQL(fx.orgA, [{ $limit: 1 }]) },
  { name: 'ExportTabularData', kind: 'read', run: (c) => c.exportTabularData(fx.machineA1.part_id, 's', sensor, 'Readings') },
  { name: 'GetLatestTabularData', kind: 'read', run: (c) => c.getLatestTabularData(fx.machineA1.part_id, 's', sensor, 'Readings') },
  { name: 'BinaryDataByFilter', kind: 'read', run: (c) => c.binaryDataByFilter(orgA()) },
  { name: 'BinaryDataByIDs', kind: 'read', run: (c, s) => c.binaryDataByIds([s.binaryId]) },
  { name: 'DeleteTabularData', kind: 'write', run: (c) => c.deleteTabularData(fx.orgA, 3650) },
  { name: 'DeleteBinaryDataByFilter', kind: 'write', run: (c, s) => c.deleteBinaryDataByFilter({ ...orgA(), componentName: `${s.unique}-none` }) },
  { name: 'DeleteBinaryDataByIDs', kind: 'write', run: (c, s) => c.deleteBinaryDataByIds([s.binaryId]) },
  { name: 'AddTagsToBinaryDataByIDs', kind: 'write', run: (c, s) => c.addTagsToBinaryDataByIds(['n'], [s.binaryId]) },
  { name: 'AddTagsToBinaryDataByFilter', kind: 'write', run: (c, s) => c.addTagsToBinaryDataByFilter(['n'], { ...orgA(), componentName: s.unique }) },
  { name: 'RemoveTagsFromBinaryDataByIDs', kind: 'write', run: (c, s) => c.removeTagsFromBinaryDataByIds(['t'], [s.binaryId]) },
  { name: 'RemoveTagsFromBinaryDataByFilter', kind: 'write', run: (c, s) => c.removeTagsFromBinaryDataByFilter(['t'], { ...orgA(), componentName: s.unique }) },
  { name: 'TagsByFilter', kind: 'read', run: (c) => c.tagsByFilter(orgA()) },
  { name: 'AddBoundingBoxToImageByID', kind: 'write', run: (c, s) => c.addBoundingBoxToImageById(s.imageId, 'dog', 0, 0, 0.5, 0.5) },
  { name: 'RemoveBoundingBoxFromImageByID', kind: 'write', run: (c, s) => c.removeBoundingBoxFromImageById(s.imageId, s.bboxId) },
  { name: 'BoundingBoxLabelsByFilter', kind: 'read', run: (c) => c.boundingBoxLabelsByFilter(orgA()) },
  { name: 'GetDatabaseConnection', kind: 'org-read', engine: true, run: (c) => c.getDatabaseConnection(fx.orgA) },
  { name: 'ConfigureDatabaseUser', kind: 'org-owner', engine: true, run: (c) => c.configureDatabaseUser(fx.orgA, 'Secret-pass-123') },
  { name: 'CreateDataset', kind: 'write', run: (c, s) => c.createDataset(`new-${s.unique}`, fx.orgA) },
  { name: 'DeleteDataset', kind: 'org-owner', run: (c, s) => c.deleteDataset(s.datasetId) },
  { name: 'RenameDataset', kind: 'org-owner', run: (c, s) => c.renameDataset(s.datasetId, `renamed-${s.unique}`) },
  { name: 'ListDatasetsByOrganizationID', kind: 'read', run: (c) => c.listDatasetsByOrganizationID(fx.orgA) },
  { name: 'ListDatasetsByIDs', kind: 'read', run: (c, s) => c.listDatasetsByIds([s.datasetId]) },
  { name: 'AddBinaryDataToDatasetByIDs', kind: 'write', run: (c, s) => c.addBinaryDataToDatasetByIds([s.imageId], s.datasetId) },
  { name: 'RemoveBinaryDataFromDatasetByIDs', kind: 'write', run: (c, s) => c.removeBinaryDataFromDatasetByIds([s.binaryId], s.datasetId) },
  { name: 'MergeDatasets', kind: 'write', run: (c, s) => c.mergeDatasets([s.datasetId], `merged-${s.unique}`, fx.orgA) },
  { name: 'CreateDatasetVersion', kind: 'write', run: (c, s) => c.createDatasetVersion(s.datasetId) },
  { name: 'ListDatasetVersions', kind: 'read', run: (c, s) => c.listDatasetVersions(s.datasetId) },
  {
    name: 'GetDatasetVersion',
    kind: 'read',
    run: async (c, s) => {
      if (s !== nothing) await owner.createDatasetVersion(s.datasetId);
      return c.getDatasetVersion(s.datasetId, 1);
    },
  },
  {
    name: 'ExportDataset',
    kind: 'read',
    run: (c, s) => {
      const zip = join(tmpdir(), `perm-export-${s.unique}-${++counter}.zip`);
      return c.exportDataset(s.datasetId, zip, { format: 'jsonl' }).finally(() => rmSync(zip, { force: true }));
    },
  },
  {
    name: 'ExportMcap',
    kind: 'read',
    run: (c, s) => {
      const file = join(tmpdir(), `perm-mcap-${s.unique}-${++counter}.mcap`);
      return c.exportMcap({ ...orgA(), componentName: s.unique }, file).finally(() => rmSync(file, { force: true }));
    },
  },
  {
    name: 'ImportDataset',
    kind: 'write',
    run: (c, s) => {
      const zip = join(tmpdir(), `perm-import-${s.unique}-${++counter}.zip`);
      const yaml = { name: 'data.yaml', data: Buffer.from('names: [thing]\n') };
      writeFileSync(zip, rawZip([yaml, { name: 'images/a.png', data: noisyPng(4, 4) }]));
      return c.importDataset(s.datasetId, zip, 'yolo', fx.machineA1.part_id).finally(() => rmSync(zip, { force: true }));
    },
  },
];

/** Ids that name nothing: enough for calls refused before any lookup (no token, part tokens). */
const nothing: Setup = { binaryId: 'none', imageId: 'none', bboxId: 'none', datasetId: 'none', unique: 'none' };

async function expectCode(t: ExecutionContext, rpc: Rpc, client: DataClient, code: status, who: string, needsData = true) {
  const err = await t.throwsAsync(rpc.run(client, needsData ? await setup() : nothing), undefined, `${rpc.name} as ${who}`);
  t.is(codeOf(err), code, `${rpc.name} as ${who}: ${err?.message}`);
}

async function expectAllowed(t: ExecutionContext, rpc: Rpc, client: DataClient, who: string) {
  try {
    await rpc.run(client, await setup());
    t.pass();
  } catch (err) {
    // Without a registered query engine the engine calls pass auth and then answer UNAVAILABLE.
    if (rpc.engine && codeOf(err) === status.UNAVAILABLE) t.pass();
    else t.fail(`${rpc.name} as ${who} should be allowed: ${(err as Error).message}`);
  }
}

for (const rpc of rpcs) {
  test(`${rpc.name}: no token and bad tokens are UNAUTHENTICATED`, async (t) => {
    await expectCode(t, rpc, clientWithMetadata(new Metadata()), status.UNAUTHENTICATED, 'no token', false);
    await expectCode(t, rpc, clientWithMetadata(bearer('not.a.token')), status.UNAUTHENTICATED, 'garbage token', false);
    const forged = new TokenSigner(Buffer.alloc(32, 1)).sign(fx.keys.ownerA.id, 'api-key');
    await expectCode(t, rpc, clientWithMetadata(bearer(forged)), status.UNAUTHENTICATED, 'token signed elsewhere', false);
    const basic = new Metadata();
    basic.set('authorization', 'Basic abc');
    await expectCode(t, rpc, clientWithMetadata(basic), status.UNAUTHENTICATED, 'non-bearer authorization', false);
  });

  test(`${rpc.name}: another organization's owner key is PERMISSION_DENIED`, async (t) => {
    await expectCode(t, rpc, fx.client(fx.keys.ownerB).dataClient, status.PERMISSION_DENIED, 'org B owner');
  });

  test(`${rpc.name}: operator versus owner`, async (t) => {
    const operator = fx.client(fx.keys.operatorA).dataClient;
    if (rpc.kind === 'read' || rpc.kind === 'org-read') await expectAllowed(t, rpc, operator, 'operator');
    else await expectCode(t, rpc, operator, status.PERMISSION_DENIED, 'operator');
    await expectAllowed(t, rpc, owner, 'owner');
  });

  test(`${rpc.name}: a machine part token may only upload its own data`, async (t) => {
    const part = fx.partClient(fx.machineA1).dataClient;
    if (rpc.kind === 'upload') {
      await expectAllowed(t, rpc, part, 'its own part');
      await expectCode(t, rpc, fx.partClient(fx.machineA2).dataClient, status.PERMISSION_DENIED, 'another part');
    } else {
      await expectCode(t, rpc, part, status.PERMISSION_DENIED, 'part', false);
    }
  });
}

test('location and machine keys reach only their scope', async (t) => {
  const inA1 = await owner.binaryDataCaptureUpload(Buffer.from('1'), fx.machineA1.part_id, 'cam', 'scope', 'M', '.jpg', now());
  const inA2 = await owner.binaryDataCaptureUpload(Buffer.from('2'), fx.machineA2.part_id, 'cam', 'scope', 'M', '.jpg', now());
  const loc = fx.client(fx.keys.ownerLocA1).dataClient;
  const machine = fx.client(fx.keys.ownerMachineA2).dataClient;
  t.is((await loc.binaryDataByIds([inA1])).length, 1);
  t.is(codeOf(await t.throwsAsync(loc.binaryDataByIds([inA2]))), status.PERMISSION_DENIED);
  t.is(codeOf(await t.throwsAsync(machine.addTagsToBinaryDataByIds(['x'], [inA1]))), status.PERMISSION_DENIED);
  await machine.addTagsToBinaryDataByIds(['x'], [inA2]);
  t.deepEqual(
    (await loc.binaryDataByFilter({ componentName: 'scope' })).data.map((d) => d.metadata.binaryDataId),
    [inA1],
  );
  t.deepEqual(
    (await machine.binaryDataByFilter({ componentName: 'scope' })).data.map((d) => d.metadata.binaryDataId),
    [inA2],
  );
  // Uploads: an owner key only for parts in its scope.
  t.is(codeOf(await t.throwsAsync(loc.fileUpload(Buffer.from('x'), fx.machineA2.part_id))), status.PERMISSION_DENIED);
  t.truthy(await loc.fileUpload(Buffer.from('x'), fx.machineA1.part_id));
  // Organization-level calls refuse narrower keys, whatever their role.
  t.is(codeOf(await t.throwsAsync(loc.tabularDataBySQL(fx.orgA, 'SELECT 1'))), status.PERMISSION_DENIED);
  const ds = await owner.createDataset('scoped-ds', fx.orgA);
  t.is(codeOf(await t.throwsAsync(loc.renameDataset(ds, 'nope'))), status.PERMISSION_DENIED);
  t.is(codeOf(await t.throwsAsync(loc.deleteDataset(ds))), status.PERMISSION_DENIED);
  t.truthy(await loc.createDataset('made-by-location-owner', fx.orgA));
  // The operator of a location reads its data but cannot tag it.
  const locOperator = fx.client(fx.keys.operatorLocA1).dataClient;
  t.is((await locOperator.binaryDataByIds([inA1])).length, 1);
  t.is(codeOf(await t.throwsAsync(locOperator.addTagsToBinaryDataByIds(['x'], [inA1]))), status.PERMISSION_DENIED);
});

test('an expired token is UNAUTHENTICATED', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const secret = Buffer.from(readFileSync(join(fx.cloud.dataDir, 'token-secret'), 'utf8'), 'base64');
  const expired = new TokenSigner(secret, 60).sign(fx.keys.ownerA.id, 'api-key', Date.now() - 120_000);
  const fresh = new TokenSigner(secret, 60).sign(fx.keys.ownerA.id, 'api-key');
  const err = await t.throwsAsync(clientWithMetadata(bearer(expired)).tagsByFilter());
  t.is(codeOf(err), status.UNAUTHENTICATED);
  t.regex(err!.message, /expired/);
  t.true(Array.isArray(await clientWithMetadata(bearer(fresh)).tagsByFilter()));
});
