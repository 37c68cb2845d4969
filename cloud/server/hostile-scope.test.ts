// The hostile-tenant suite, scope and role (issue 27, finding 11): a key may write only what its role and
// scope allow. A part's log lines and status are written by the machine itself (its part secret, or a
// key scoped to its machine, the form platform-agent installs) or an owner whose scope holds the part;
// an operator key elsewhere in the organization reads them but may not write them. MergeDatasets checks
// every image it would tag against the caller's scope.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { callAdminChannel } from '../admin/channel.js';
import { call, partClients, type Login, type PartClients } from '../parts/testing/part-clients.js';
import { codeOf, startFixture, type CloudFixture, type Key } from '../testing/tenancy-fixture.js';

let fx: CloudFixture;
const opened: PartClients[] = [];

test.before(async () => {
  fx = await startFixture();
});
test.after.always(async () => {
  for (const c of opened) c.close();
  await fx?.close();
});

async function as(login: Login): Promise<PartClients> {
  const c = await partClients(fx.cloud.address, login);
  opened.push(c);
  return c;
}

const logLine = (message: string) => ({ time: new Date(), level: 'info', loggerName: 'hostile', message, fields: {} });

async function writes(c: PartClients, partId: string, message: string): Promise<{ log: number | undefined; status: number | undefined }> {
  const log = await call(c.robot.log.bind(c.robot), { id: partId, logs: [logLine(message)] }, c.md).then(
    () => undefined,
    (err: unknown) => codeOf(err),
  );
  const report = await call(
    c.robot.reportStatus.bind(c.robot),
    { id: partId, runtimeVersion: message, machineState: 'running', configRevision: 0, configError: '', notReady: [], resourceCount: 0 },
    c.md,
  ).then(
    () => undefined,
    (err: unknown) => codeOf(err),
  );
  return { log, status: report };
}

test.serial("a part's log lines and status: operator keys are refused; the part, its machine's key and owners in scope may write", async (t) => {
  const partId = fx.machineA1.part_id;
  const denied = { log: status.PERMISSION_DENIED, status: status.PERMISSION_DENIED };
  t.deepEqual(await writes(await as(fx.keys.operatorA), partId, 'org operator'), denied, 'an organization-level operator key');
  t.deepEqual(await writes(await as(fx.keys.operatorLocA1), partId, 'location operator'), denied, "an operator key of the part's location");
  t.deepEqual(await writes(await as(fx.keys.ownerMachineA2), partId, 'owner of another machine'), denied, 'an owner key of another machine');
  t.deepEqual(await writes(await as(fx.keys.ownerB), partId, 'other org'), denied, "another organization's owner");
  const otherPart = await as({ partId: fx.machineA2.part_id, secret: fx.machineA2.part_secret });
  t.deepEqual(await writes(otherPart, partId, 'another part'), denied, "another part's secret");

  const allowed = { log: undefined, status: undefined };
  t.deepEqual(await writes(await as({ partId, secret: fx.machineA1.part_secret }), partId, 'the part'), allowed, 'the part itself');
  const machineKey = (await callAdminChannel(fx.cloud.dataDir, 'key.create', { org: fx.orgA, machine: fx.machineA1.machine_id, role: 'operator' }))!
    .result as Key;
  t.deepEqual(await writes(await as(machineKey), partId, 'machine key'), allowed, "a key scoped to the part's machine (platform-agent's credentials)");
  t.deepEqual(await writes(await as(fx.keys.ownerLocA1), partId, 'location owner'), allowed, "an owner key of the part's location");
  t.deepEqual(await writes(await as(fx.keys.ownerA), partId, 'org owner'), allowed, 'an organization-level owner');

  // Operators still read what they may not write.
  const reader = await as(fx.keys.operatorA);
  const page = await call(reader.app.getRobotPartLogs.bind(reader.app), { id: partId, levels: [], filter: '', pageToken: '', limit: 100 }, reader.md);
  const messages = page.logs.map((l) => l.message).sort();
  t.deepEqual(messages, ['location owner', 'machine key', 'org owner', 'the part']);
  const { part } = await call(reader.app.getRobotPart.bind(reader.app), { id: partId }, reader.md);
  t.is(part?.lastStatus?.runtimeVersion, 'org owner');
});

test.serial('MergeDatasets by a location-scoped owner tags no image outside its location', async (t) => {
  const ownerA = fx.client(fx.keys.ownerA).dataClient;
  const locOwner = fx.client(fx.keys.ownerLocA1).dataClient;
  const when = [new Date(), new Date()] as [Date, Date];
  const inA1 = await ownerA.binaryDataCaptureUpload(Buffer.from('a1'), fx.machineA1.part_id, 'rdk:component:camera', 'merge', 'GetImages', '.png', when);
  const inA2 = await ownerA.binaryDataCaptureUpload(Buffer.from('a2'), fx.machineA2.part_id, 'rdk:component:camera', 'merge', 'GetImages', '.png', when);
  const mixed = await ownerA.createDataset('mixed', fx.orgA);
  await ownerA.addBinaryDataToDatasetByIds([inA1, inA2], mixed);

  const err = await t.throwsAsync(locOwner.mergeDatasets([mixed], 'stolen', fx.orgA));
  t.is(codeOf(err), status.PERMISSION_DENIED);
  t.regex(err!.message, /1 image of dataset_ids .* is outside|outside the scope/);
  const names = (await ownerA.listDatasetsByOrganizationID(fx.orgA)).map((d) => d.name);
  t.false(names.includes('stolen'), 'no dataset was created');
  const [a2] = await ownerA.binaryDataByIds([inA2]);
  t.deepEqual(a2.metadata.datasetIds, [mixed], 'the image outside the scope kept its datasets');

  // Inside its scope the same key merges.
  const own = await ownerA.createDataset('lab only', fx.orgA);
  await ownerA.addBinaryDataToDatasetByIds([inA1], own);
  const merged = await locOwner.mergeDatasets([own], 'lab merged', fx.orgA);
  const [a1] = await ownerA.binaryDataByIds([inA1]);
  t.true(a1.metadata.datasetIds.includes(merged));
});
