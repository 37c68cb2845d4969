// Packages end to end: the real platform-cloud serves its stored model artefacts as ml_model packages,
// and the real platform-server, online from a credentials file, installs the packages its cloud config
// lists, runs the resources that say ${packages.NAME}, follows a new version (a config change, or a model
// trained again under "latest"), removes the old one, and runs offline from what is installed. Errors name the package and the reason on the resource.
import test from 'ava';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelArtefactStore } from '../../cloud/mltraining/model-artefacts.js';
import { ensureTrainingTables } from '../../cloud/mltraining/training-tables.js';
import { Store } from '../../cloud/store/store.js';
import { bearer, call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { writeChannelMeansModel } from '../../drivers/mlmodel/testing/tiny-onnx.js';
import { PackageServiceClient } from '../../gen/platform/app/packages/v1/packages.js';
import { MLModelServiceClient } from '../../gen/platform/service/mlmodel/v1/mlmodel.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { waitFor } from '../../core/serving/testing/eventually.js';

type Machine = { machine_id: string; part_id: string; part_secret: string };

let cloud: SpawnedCloud;
let dataDir: string;
let port: string;
let orgA: string;
let orgB: string;
let rover: Machine;
let drone: Machine;
let crane: Machine;
let intruder: Machine;
let owner: PartClients;
const work = mkdtempSync(join(tmpdir(), 'packages-e2e-'));
const packagesDir = join(work, 'packages');
const env = { PLATFORM_ONLINE_DIR: join(work, 'online'), PLATFORM_PACKAGES_DIR: packagesDir, PLATFORM_ONLINE_RETRY_MAX_MS: '1000' };
const runtimes: SpawnedRuntime[] = [];

/** Artefact ids by `${org}/${model name}/${version}`, to find their files in the blob store. */
const artefactIds = new Map<string, string>();

/** Stores a model artefact as a finished training job would: model.onnx (a tiny real model) and labels.txt. */
async function storeArtefact(org: string, modelName: string, modelVersion: string, size: number): Promise<void> {
  const out = mkdtempSync(join(work, 'out-'));
  writeChannelMeansModel(join(out, 'model.onnx'), size);
  writeFileSync(join(out, 'labels.txt'), 'red\ngreen\nblue\n');
  const store = await Store.open(dataDir, { readers: 1, insertLanes: 1 });
  try {
    await ensureTrainingTables(store);
    const artefacts = new ModelArtefactStore(store);
    const { artefact } = await artefacts.upload(out, {
      organizationId: org,
      modelName,
      modelVersion,
      trainingJobId: `job-${modelName}-${modelVersion}`,
      validationMetrics: {},
    });
    await store.transact((tx) => artefacts.record(tx, artefact));
    artefactIds.set(`${org}/${modelName}/${modelVersion}`, artefact.id);
  } finally {
    await store.close();
  }
}

/** Where the embedded default's blob store keeps a file of an artefact (model-artefacts.ts). */
const artefactFile = async (org: string, modelName: string, modelVersion: string, file: string) =>
  join(dataDir, 'blobs', 'mltraining', 'models', org, artefactIds.get(`${org}/${modelName}/${modelVersion}`)!, file);

const mlmodel = (name: string, pkg: string) => ({
  name,
  api: 'core:service:mlmodel',
  model: 'onnx_cpu',
  attributes: { model_path: `\${packages.${pkg}}/model.onnx`, label_path: `\${packages.${pkg}}/labels.txt` },
});

async function setPartConfig(config: Record<string, unknown>, part: Machine = rover): Promise<void> {
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: part.part_id, robotConfig: config }, owner.md);
}

async function resourceError(runtime: SpawnedRuntime, name: string): Promise<string> {
  const client = new RobotServiceClient(runtime.address, insecure());
  try {
    const { resources } = await call(client, 'getMachineStatus', {});
    return (resources as { name?: { name: string }; error: string }[]).find((r) => r.name?.name === name)?.error ?? '';
  } finally {
    client.close();
  }
}

/** The revision of the config the runtime runs: 1 at start, +1 for each config change it applied. */
async function configRevision(runtime: SpawnedRuntime): Promise<number> {
  const client = new RobotServiceClient(runtime.address, insecure());
  try {
    return (await call(client, 'getConfig', {})).revision as number;
  } finally {
    client.close();
  }
}

/** The model's input shape, [-1, 3, size, size]: which version a resource runs. */
async function inputShape(runtime: SpawnedRuntime, name: string): Promise<number[]> {
  const client = new MLModelServiceClient(runtime.address, insecure());
  try {
    const { metadata } = await call(client, 'metadata', { name });
    return (metadata.inputInfo[0].shape as number[]).map(Number);
  } finally {
    client.close();
  }
}

test.before(async () => {
  dataDir = tempDataDir();
  orgA = (await adminJson(dataDir, ['org', 'create', 'acme'])).id;
  orgB = (await adminJson(dataDir, ['org', 'create', 'rival'])).id;
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', orgA, '--name', 'rover']);
  intruder = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', orgB, '--name', 'intruder']);
  drone = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', orgA, '--name', 'drone']);
  crane = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', orgA, '--name', 'crane']);
  await storeArtefact(orgA, 'shapes', 'v1', 4);
  await storeArtefact(orgA, 'retrained', 'v1', 4);
  await storeArtefact(orgA, 'gated', 'v1', 4);
  await storeArtefact(orgA, 'tampered', 'v1', 4);
  await storeArtefact(orgB, 'secret', 'v1', 4);
  cloud = await spawnCloud(dataDir);
  port = cloud.address.slice(cloud.address.lastIndexOf(':') + 1);
  const key = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', orgA, '--role', 'owner']);
  owner = await partClients(cloud.address, key);
});

test.after.always(async () => {
  for (const r of runtimes) await r.stop();
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
  removeDataDir(work);
});

test.serial("PackageService: a part gets its organization's packages with sha256, streamed; another organization's is NOT_FOUND", async (t) => {
  const client = new PackageServiceClient(cloud.address, insecure());
  t.teardown(() => client.close());
  const md = await bearer(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
  const { package: info } = await cloudCall(client.getPackage.bind(client), { packageId: `${orgA}/shapes`, version: 'latest', type: 'ml_model' }, md);
  t.is(info!.version, 'v1');
  t.is(info!.type, 'ml_model');
  const onDisk = readFileSync(await artefactFile(orgA, 'shapes', 'v1', 'model.onnx'));
  const model = info!.files.find((f) => f.name === 'model.onnx')!;
  t.deepEqual([model.sha256, model.sizeBytes], [createHash('sha256').update(onDisk).digest('hex'), onDisk.byteLength]);
  t.deepEqual(info!.files.map((f) => f.name).sort(), ['labels.txt', 'model.onnx']);
  const chunks: Buffer[] = [];
  for await (const m of client.downloadPackageFile({ packageId: `${orgA}/shapes`, version: 'v1', fileName: 'model.onnx' }, md))
    chunks.push(Buffer.from(m.chunk));
  t.deepEqual(Buffer.concat(chunks), onDisk);

  const get = (packageId: string, version: string, metadata = md) =>
    t.throwsAsync(cloudCall(client.getPackage.bind(client), { packageId, version, type: '' }, metadata)) as Promise<ServiceError>;
  const foreign = await get(`${orgB}/secret`, 'v1');
  t.is(foreign.code, status.NOT_FOUND);
  t.is(foreign.details, `package ${orgB}/secret: no such package in organization ${orgA}`);
  // The owner of the other organization sees its own package, and not ours.
  const rivalMd = await bearer(cloud.address, { partId: intruder.part_id, secret: intruder.part_secret });
  t.is((await get(`${orgA}/shapes`, 'v1', rivalMd)).code, status.NOT_FOUND);
  const version = await get(`${orgA}/shapes`, 'v9');
  t.is(version.details, `package ${orgA}/shapes: no version v9 (versions: v1)`);
  const bad = await get('shapes', 'v1');
  t.is(bad.code, status.INVALID_ARGUMENT);
  t.regex(bad.details, /package_id must be <organization id>\/<model name>/);
  const download = (await t.throwsAsync(async () => {
    for await (const _ of client.downloadPackageFile({ packageId: `${orgB}/secret`, version: 'v1', fileName: 'model.onnx' }, md)) void _;
  })) as ServiceError;
  t.is(download.code, status.NOT_FOUND);
  const noCreds = await get(`${orgA}/shapes`, 'v1', new Metadata());
  t.is(noCreds.code, status.UNAUTHENTICATED);
});

test.serial('an online machine installs its packages and runs the resources that reference them; errors name the package', async (t) => {
  // The cloud hashes a file once; changing it afterwards is what a corrupted download looks like to the machine.
  const client = new PackageServiceClient(cloud.address, insecure());
  const md = await bearer(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
  await cloudCall(client.getPackage.bind(client), { packageId: `${orgA}/tampered`, version: 'v1', type: '' }, md);
  client.close();
  writeFileSync(await artefactFile(orgA, 'tampered', 'v1', 'model.onnx'), 'not what was hashed');

  await setPartConfig({
    packages: [
      { name: 'shapes', package: `${orgA}/shapes`, version: 'v1', type: 'ml_model' },
      { name: 'foreign', package: `${orgB}/secret`, version: 'v1', type: 'ml_model' },
      { name: 'future', package: `${orgA}/shapes`, version: 'v9', type: 'ml_model' },
      { name: 'bad', package: `${orgA}/tampered`, version: 'v1', type: 'ml_model' },
    ],
    services: [mlmodel('shapes-model', 'shapes'), mlmodel('foreign-model', 'foreign'), mlmodel('future-model', 'future'), mlmodel('bad-model', 'bad')],
  });
  const runtime = await spawnRuntime({ cloud: { id: rover.part_id, secret: rover.part_secret, app_address: `127.0.0.1:${port}` } }, { env });
  runtimes.push(runtime);
  t.deepEqual(await waitFor('the packaged model', () => inputShape(runtime, 'shapes-model').catch(() => undefined), 120_000), [-1, 3, 4, 4]);
  t.true(existsSync(join(packagesDir, orgA, 'shapes', 'v1', 'model.onnx')));
  t.is(
    await resourceError(runtime, 'foreign-model'),
    `services[1].attributes: package foreign (${orgB}/secret@v1): package ${orgB}/secret: no such package in organization ${orgA}`,
  );
  t.is(
    await resourceError(runtime, 'future-model'),
    `services[2].attributes: package future (${orgA}/shapes@v9): package ${orgA}/shapes: no version v9 (versions: v1)`,
  );
  t.regex(
    await resourceError(runtime, 'bad-model'),
    new RegExp(`^services\\[3\\]\\.attributes: package bad \\(${orgA}/tampered@v1\\): model.onnx has sha256 [0-9a-f]{64} \\(19 bytes\\); the release says`),
  );
  t.false(existsSync(join(packagesDir, orgA, 'tampered')), 'nothing of a bad download is installed');
});

test.serial('a new version replaces the old one, which is then removed; offline, the machine runs what is installed', async (t) => {
  const runtime = runtimes[0];
  // The cloud stores a new version (a trainer run while it was down); it comes back on the same address.
  await cloud.stop();
  await storeArtefact(orgA, 'shapes', 'v2', 6);
  cloud = await spawnCloud(dataDir, ['--port', port]);
  await setPartConfig({ packages: [{ name: 'shapes', package: `${orgA}/shapes`, type: 'ml_model' }], services: [mlmodel('shapes-model', 'shapes')] });
  t.deepEqual(
    await waitFor('the new version', async () => ((await inputShape(runtime, 'shapes-model').catch(() => [])).at(-1) === 6 ? true : undefined), 120_000),
    true,
  );
  await waitFor('the old version removed', () => !existsSync(join(packagesDir, orgA, 'shapes', 'v1')), 30_000);
  t.deepEqual(await readdir(join(packagesDir, orgA, 'shapes')), ['v2']);
  t.deepEqual(await readdir(join(packagesDir, orgA)), ['shapes'], 'the versions nothing uses are gone');

  // Offline: a restarted machine runs its cached config with the installed version.
  await runtime.stop();
  await cloud.stop();
  const offline = await spawnRuntime({ cloud: { id: rover.part_id, secret: rover.part_secret, app_address: `127.0.0.1:${port}` } }, { env });
  runtimes.push(offline);
  t.deepEqual(await waitFor('the installed model offline', () => inputShape(offline, 'shapes-model').catch(() => undefined), 120_000), [-1, 3, 6, 6]);

  // A local full config with `cloud` installs the same way. Started while the cloud is down, with nothing
  // installed, its resource names the package and the reason, and it installs once the cloud is back.
  const local = await spawnRuntime(
    {
      cloud: { id: rover.part_id, secret: rover.part_secret, app_address: `127.0.0.1:${port}` },
      packages: [{ name: 'shapes', package: `${orgA}/shapes`, version: 'v2', type: 'ml_model' }],
      services: [mlmodel('shapes-model', 'shapes')],
    },
    { env: { ...env, PLATFORM_PACKAGES_DIR: join(work, 'local-packages'), PLATFORM_PACKAGES_RETRY_MS: '500' } },
  );
  runtimes.push(local);
  t.regex(
    await waitFor('the offline error', async () => (await resourceError(local, 'shapes-model')) || undefined, 60_000),
    new RegExp(`^services\\[0\\]\\.attributes: package shapes \\(${orgA}/shapes@v2\\): not installed and cannot be downloaded`),
  );
  cloud = await spawnCloud(dataDir, ['--port', port]);
  t.deepEqual(await waitFor('installed once the cloud is back', () => inputShape(local, 'shapes-model').catch(() => undefined), 120_000), [-1, 3, 6, 6]);
});

test.serial('a machine that follows "latest" installs the version the cloud trains next, with no config change, and removes the old one', async (t) => {
  const packages = join(work, 'drone-packages');
  await setPartConfig(
    {
      packages: [{ name: 'retrained', package: `${orgA}/retrained`, version: 'latest', type: 'ml_model' }],
      services: [mlmodel('retrained-model', 'retrained')],
    },
    drone,
  );
  const runtime = await spawnRuntime(
    { cloud: { id: drone.part_id, secret: drone.part_secret, app_address: `127.0.0.1:${port}` } },
    { env: { ...env, PLATFORM_PACKAGES_DIR: packages, PLATFORM_PACKAGES_LATEST_MS: '1000' } },
  );
  runtimes.push(runtime);
  t.deepEqual(await waitFor('v1 running', () => inputShape(runtime, 'retrained-model').catch(() => undefined), 120_000), [-1, 3, 4, 4]);
  const revision = await configRevision(runtime);

  // A training job finishes v2 in the cloud. The cloud reads its artefacts when it starts, so the new one is
  // stored while it is down; it comes back on the same address, and the part's config is not touched.
  await cloud.stop();
  await storeArtefact(orgA, 'retrained', 'v2', 6);
  cloud = await spawnCloud(dataDir, ['--port', port]);
  t.true(
    await waitFor('v2 running', async () => (await inputShape(runtime, 'retrained-model').catch(() => [])).at(-1) === 6 || undefined, 120_000),
    'the mlmodel resource runs the new version',
  );
  await waitFor('v1 removed', () => !existsSync(join(packages, orgA, 'retrained', 'v1')) || undefined, 30_000);
  t.deepEqual(await readdir(join(packages, orgA, 'retrained')), ['v2']);
  t.deepEqual(await inputShape(runtime, 'retrained-model'), [-1, 3, 6, 6]);
  t.is(await configRevision(runtime), revision, 'no config change was applied: the check found the new version');
  const installed = runtime.logs().filter((l) => l.msg === 'package installed' && l.package === 'retrained');
  t.deepEqual(
    installed.map((l) => [l.id, l.version, l.folder]),
    [
      [`${orgA}/retrained`, 'v1', join(packages, orgA, 'retrained', 'v1')],
      [`${orgA}/retrained`, 'v2', join(packages, orgA, 'retrained', 'v2')],
    ],
  );
});

test.serial('the maintenance window holds a newer "latest" version back until it allows a reconfiguration', async (t) => {
  const packages = join(work, 'crane-packages');
  await setPartConfig(
    {
      packages: [{ name: 'gated', package: `${orgA}/gated`, type: 'ml_model' }],
      components: [{ name: 'gate', api: 'core:component:sensor', model: 'fake', attributes: { readings: { allowed: true } } }],
      services: [mlmodel('gated-model', 'gated')],
      maintenance: { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' },
      // Each deferred check is a debug line of the runtime's own logger: it shows a check ran and waited.
      log: [{ pattern: 'platform.server', level: 'debug' }],
    },
    crane,
  );
  const runtime = await spawnRuntime(
    { cloud: { id: crane.part_id, secret: crane.part_secret, app_address: `127.0.0.1:${port}` } },
    { env: { ...env, PLATFORM_PACKAGES_DIR: packages, PLATFORM_PACKAGES_LATEST_MS: '1000' } },
  );
  runtimes.push(runtime);
  t.deepEqual(await waitFor('v1 running', () => inputShape(runtime, 'gated-model').catch(() => undefined), 120_000), [-1, 3, 4, 4]);
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  await call(sensors, 'doCommand', { name: 'gate', command: { set: { allowed: false } } });

  await cloud.stop();
  await storeArtefact(orgA, 'gated', 'v2', 6);
  cloud = await spawnCloud(dataDir, ['--port', port]);
  const deferred = () => runtime.logs().filter((l) => l.msg === 'package check deferred by the maintenance window');
  const before = deferred().length;
  await waitFor('a check deferred after v2 was stored', () => deferred().length > before || undefined, 60_000);
  t.deepEqual(await inputShape(runtime, 'gated-model'), [-1, 3, 4, 4], 'the running version stays while the window is closed');
  t.deepEqual(await readdir(join(packages, orgA, 'gated')), ['v1'], 'nothing is downloaded while the window is closed');
  t.is(deferred().filter((l) => l.level === 30).length, 1, 'the wait is logged once at info');
  t.is(deferred()[0].reason, 'maintenance sensor reading allowed is false');

  await call(sensors, 'doCommand', { name: 'gate', command: { set: { allowed: true } } });
  t.true(await waitFor('v2 running', async () => (await inputShape(runtime, 'gated-model').catch(() => [])).at(-1) === 6 || undefined, 120_000));
  await waitFor('v1 removed', () => !existsSync(join(packages, orgA, 'gated', 'v1')) || undefined, 30_000);
  t.deepEqual(await readdir(join(packages, orgA, 'gated')), ['v2']);
});
