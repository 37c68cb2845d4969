// Online machines end to end: the real platform-cloud and the real platform-server started from a
// credentials file. The runtime gets its config from the cloud, follows changes, keeps serving from its
// cache while the cloud is down, reports its status and ships its logs. The credentials (an API key, a
// wrong secret, plaintext, the agent) are in online-credentials.test.ts.
import test from 'ava';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { credentialsOf, machineStatus, readings, sensor, until, type Machine } from './testing/online-helpers.js';

let cloud: SpawnedCloud;
let dataDir: string;
let port: string;
let rover: Machine;
/** A second machine for the tests that need their own config history. */
let lab: Machine;
let owner: PartClients;
let ownerKey: { id: string; key: string };
let orgId: string;
const onlineDir = mkdtempSync(join(tmpdir(), 'platform-online-'));
const env = { PLATFORM_ONLINE_DIR: onlineDir, PLATFORM_ONLINE_RETRY_MAX_MS: '1000' };
const runtimes: SpawnedRuntime[] = [];
const started = new Date(Date.now() - 1000);

test.before(async () => {
  dataDir = tempDataDir();
  cloud = await spawnCloud(dataDir);
  port = cloud.address.slice(cloud.address.lastIndexOf(':') + 1);
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  orgId = org.id;
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  lab = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'lab']);
  ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  owner = await partClients(cloud.address, ownerKey);
});

test.after.always(async () => {
  for (const r of runtimes) await r.stop();
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
  removeDataDir(onlineDir);
});

test.serial('a config set in the cloud is served, and a change in the cloud is served', async (t) => {
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    { id: rover.part_id, robotConfig: { components: [sensor('thermometer', { celsius: 21 })] } },
    owner.md,
  );
  const runtime = await spawnRuntime(credentialsOf(rover, `127.0.0.1:${port}`), { env });
  runtimes.push(runtime);
  t.deepEqual(await readings(runtime, 'thermometer'), { celsius: 21 });
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    { id: rover.part_id, robotConfig: { components: [sensor('thermometer', { celsius: 21 }), sensor('hygrometer', { rh: 40 })] } },
    owner.md,
  );
  t.deepEqual(await until('the new resource', () => readings(runtime, 'hygrometer')), { rh: 40 });
  // The cloud shows the part online, with its version and the revision it runs.
  const part = await until('a status report of revision 2', async () => {
    const { part } = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: rover.part_id }, owner.md);
    return part?.online && part.lastStatus?.configRevision === 2 ? part : undefined;
  });
  t.regex(part.runtimeVersion, /^\d+\.\d+\.\d+/);
  t.is(part.lastStatus?.machineState, 'running');
  // The served config carries the credentials' cloud section, yet this is no local config beside credentials.
  t.false(runtime.logs().some((l) => /holds cloud credentials and a local machine config/.test(String(l.msg))));
});

test.serial('a saved revision that changes no resource is in the cloud status at once, not at the next periodic report', async (t) => {
  const bench = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', orgId, '--name', 'bench']);
  const config = (log: unknown[]) => ({ components: [sensor('thermometer', { celsius: 20 })], log });
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: bench.part_id, robotConfig: config([]) }, owner.md);
  // Periodic reports only every 10 minutes: what reaches the cloud here is what a change caused.
  const runtime = await spawnRuntime(credentialsOf(bench, `127.0.0.1:${port}`), { env: { ...env, PLATFORM_STATUS_INTERVAL_MS: '600000' } });
  runtimes.push(runtime);
  const revision = async (n: number) => {
    const { part } = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: bench.part_id }, owner.md);
    return part?.lastStatus?.configRevision === n ? part : undefined;
  };
  await until('the first report (revision 1)', () => revision(1));
  // Only the log rules change: no resource changes state, so nothing else would cause a report.
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    { id: bench.part_id, robotConfig: config([{ pattern: 'platform.components.*', level: 'debug' }]) },
    owner.md,
  );
  const part = await until('the report of revision 2', () => revision(2));
  t.is(part.lastStatus?.machineState, 'running');
  await runtime.stop();
});

test.serial('a full local config with a cloud section runs offline, as written, and says so', async (t) => {
  const runtime = await spawnRuntime(
    { ...credentialsOf(lab, `127.0.0.1:${port}`), components: [sensor('barometer', { hpa: 1013 })] },
    { env: { ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-local-')) } },
  );
  t.teardown(() => runtime.stop());
  t.deepEqual(await readings(runtime, 'barometer'), { hpa: 1013 });
  t.true(runtime.logs().some((l) => l.level === 40 && /holds cloud credentials and a local machine config: it runs the local config/.test(String(l.msg))));
  t.false(runtime.logs().some((l) => l.logger === 'platform.online'));
  t.is((await machineStatus(runtime)).configError, '');
});

test.serial('a config this machine cannot run shows per-resource errors in GetMachineStatus and in the cloud logs', async (t) => {
  const runtime = runtimes[0];
  const config = {
    components: [
      sensor('thermometer', { celsius: 21 }),
      sensor('hygrometer', { rh: 40 }),
      { name: 'station', api: 'acme:component:sensor', model: 'acme:weather:station' },
    ],
  };
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: rover.part_id, robotConfig: config }, owner.md);
  const station = await until('the station error', async () => (await machineStatus(runtime)).resources.find((r) => r.name?.name === 'station' && r.error));
  t.is(station.state, ResourceState.RESOURCE_STATE_UNHEALTHY);
  t.regex(station.error, /components\[2\]\.model "acme:weather:station"/);
  const logs = await until('the error in the cloud logs', async () => {
    const page = await cloudCall(
      owner.app.getRobotPartLogs.bind(owner.app),
      { id: rover.part_id, levels: ['error'], filter: 'cannot be built', pageToken: '', limit: 0 },
      owner.md,
    );
    return page.logs.length ? page.logs : undefined;
  });
  t.is(logs[0].fields?.resource, 'station');
  t.is(logs[0].loggerName, 'platform.kernel');
  const { part } = await until('the status report naming station', async () => {
    const r = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: rover.part_id }, owner.md);
    return r.part?.lastStatus?.notReady.some((n) => n.name === 'station') ? r : undefined;
  });
  t.regex(part!.lastStatus!.notReady.find((n) => n.name === 'station')!.error, /acme:weather:station/);
});

test.serial('a change from the cloud waits for the maintenance window, exactly as a saved local file does', async (t) => {
  const maintenance = { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' };
  const update = (v: number) =>
    cloudCall(
      owner.app.updateRobotPart.bind(owner.app),
      { id: lab.part_id, robotConfig: { components: [sensor('gate', { allowed: false }), sensor('s', { v })], maintenance } },
      owner.md,
    );
  await update(1);
  const runtime = await spawnRuntime(credentialsOf(lab, `127.0.0.1:${port}`), {
    env: { ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-maintenance-')) },
  });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  t.deepEqual(await readings(runtime, 's'), { v: 1 });
  await update(2);
  const client = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => client.close());
  const waiting = await until('the deferred revision', async () => {
    const s = (await call(client, 'getMachineStatus', {})) as { pendingConfig?: { reason: string } };
    return s.pendingConfig;
  });
  t.is(waiting.reason, 'maintenance sensor reading allowed is false');
  t.deepEqual(await readings(runtime, 's'), { v: 1 });
  await call(sensors, 'doCommand', { name: 'gate', command: { set: { allowed: true } } });
  t.deepEqual(await until('the new revision', async () => ((await readings(runtime, 's')).v === 2 ? readings(runtime, 's') : undefined)), { v: 2 });
});

test.serial("a module's own log lines are shipped to the cloud with its module_id", async (t) => {
  const plugins = mkdtempSync(join(tmpdir(), 'platform-online-plugins-'));
  cpSync(fileURLToPath(new URL('../../plugins/examples/weather', import.meta.url)), join(plugins, 'weather'), { recursive: true });
  t.teardown(() => removeDataDir(plugins));
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    {
      id: lab.part_id,
      robotConfig: {
        modules: [{ module_id: 'acme:weather', version: '1.2.0', log_level: 'debug' }],
        components: [{ name: 'thermo', api: 'core:component:sensor', model: 'acme:weather:thermometer', attributes: { base_c: 18, drift_c: 0 } }],
      },
    },
    owner.md,
  );
  const runtime = await spawnRuntime(credentialsOf(lab, `127.0.0.1:${port}`), {
    env: { ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-module-')), PLATFORM_PLUGINS_DIR: plugins },
  });
  t.teardown(() => runtime.stop());
  t.is((await readings(runtime, 'thermo')).temperature, 18);
  const lines = await until('the module lines in the cloud', async () => {
    const page = await cloudCall(
      owner.app.getRobotPartLogs.bind(owner.app),
      { id: lab.part_id, levels: ['debug'], filter: 'thermometer', pageToken: '', limit: 100 },
      owner.md,
    );
    return page.logs.some((l) => l.message === 'thermometer read') && page.logs.some((l) => l.message === 'thermometer constructed') ? page.logs : undefined;
  });
  const constructed = lines.find((l) => l.message === 'thermometer constructed')!;
  t.is(constructed.fields?.module_id, 'acme:weather');
  t.is(constructed.fields?.base_c, 18);
  t.is(lines.find((l) => l.message === 'thermometer read')!.fields?.temperature, 18);
});

test.serial("the runtime's log lines can be queried in the cloud by level, time and text", async (t) => {
  const query = (q: { levels?: string[]; filter?: string; start?: Date; end?: Date }) =>
    cloudCall(
      owner.app.getRobotPartLogs.bind(owner.app),
      { id: rover.part_id, levels: q.levels ?? [], filter: q.filter ?? '', start: q.start, end: q.end, pageToken: '', limit: 1000 },
      owner.md,
    );
  const revisions = await until('the revision lines', async () => {
    const page = await query({ levels: ['info'], filter: 'NEW CONFIG REVISION', start: started });
    return page.logs.length >= 3 ? page.logs : undefined;
  });
  t.true(revisions.every((l) => l.level === 'info' && /new config revision/.test(l.message) && l.loggerName === 'platform.online'));
  t.deepEqual(revisions.map((l) => l.fields?.revision).slice(0, 3), [3, 2, 1]);
  t.is((await query({ levels: ['warn'], filter: 'new config revision' })).logs.length, 0);
  t.is((await query({ filter: 'new config revision', end: started })).logs.length, 0);
  const serving = await query({ filter: 'serving' });
  t.true(serving.logs.some((l) => l.loggerName === 'platform.server' && l.message === 'serving'));
});

test.serial(
  'with the cloud killed the runtime keeps serving; restarted while the cloud is down it serves from its cache; when the cloud comes back a newer revision is applied',
  async (t) => {
    await cloud.kill9();
    const first = runtimes[0];
    t.deepEqual(await readings(first, 'hygrometer'), { rh: 40 });
    await first.stop();
    runtimes.shift();
    const again = await spawnRuntime(credentialsOf(rover, `127.0.0.1:${port}`), { env });
    runtimes.push(again);
    t.deepEqual(await readings(again, 'thermometer'), { celsius: 21 });
    t.deepEqual(await readings(again, 'hygrometer'), { rh: 40 });
    t.is((await machineStatus(again)).configError, '');
    // Saved while the cloud is down (the admin command opens the data dir directly), then the cloud returns.
    const file = join(onlineDir, 'next.json');
    writeFileSync(file, JSON.stringify({ components: [sensor('thermometer', { celsius: 22 })] }));
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      fileURLToPath(new URL('../../cloud/server/main.ts', import.meta.url)),
      'part',
      'config',
      'set',
      '--part',
      rover.part_id,
      file,
      '--data-dir',
      dataDir,
    ]);
    // Back on the same port, and now also on the non-loopback address the insecure-creds test uses.
    cloud = await spawnCloud(dataDir, ['--port', port, '--host', '0.0.0.0']);
    t.deepEqual(
      await until('revision 4', async () => {
        const r = await readings(again, 'thermometer');
        return r.celsius === 22 ? r : undefined;
      }),
      { celsius: 22 },
    );
    const gone = await until('hygrometer removed', async () =>
      (await machineStatus(again)).resources.some((r) => r.name?.name === 'hygrometer') ? undefined : true,
    );
    t.true(gone);
    // Lines logged while the cloud was down were queued on disk and shipped once it came back.
    owner.close();
    owner = await partClients(`127.0.0.1:${port}`, ownerKey);
    const cached = await until('the cache line of the restarted runtime', async () => {
      const page = await cloudCall(
        owner.app.getRobotPartLogs.bind(owner.app),
        { id: rover.part_id, levels: [], filter: 'cached cloud config found', pageToken: '', limit: 10 },
        owner.md,
      );
      return page.logs.length ? page.logs : undefined;
    });
    t.is(cached[0].fields?.revision, 3);
  },
);
