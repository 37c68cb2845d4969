// The parts extension end to end: a spawned platform-cloud, its admin commands, AppService for users
// and RobotService for machines.
import test from 'ava';
import { credentials, status } from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AgentDeviceServiceClient } from '../../gen/platform/app/agent/v1/agent.js';
import type { ConfigResponse, LogEntry } from '../../gen/platform/app/v1/robot_part.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { call, collect, partClients, type PartClients } from './testing/part-clients.js';

const cloudMain = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const run = promisify(execFile);
const cli = (dataDir: string, args: string[]) => run(process.execPath, ['--import', 'tsx', cloudMain, ...args, '--data-dir', dataDir]);

type Machine = { machine_id: string; part_id: string; part_secret: string };
let cloud: SpawnedCloud;
let rover: Machine;
let other: Machine;
let owner: PartClients;
let operator: PartClients;
let stranger: PartClients;
let roverPart: PartClients;

const sensor = (name: string) => ({ name, api: 'core:component:sensor', model: 'fake' });

test.before(async () => {
  cloud = await spawnCloud();
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'acme']);
  const orgB = await adminJson(cloud.dataDir, ['org', 'create', 'rival']);
  rover = await adminJson<Machine>(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  other = await adminJson<Machine>(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'other']);
  const ownerKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  const operatorKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'operator']);
  const strangerKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', orgB.id, '--role', 'owner']);
  owner = await partClients(cloud.address, ownerKey as { id: string; key: string });
  operator = await partClients(cloud.address, operatorKey as { id: string; key: string });
  stranger = await partClients(cloud.address, strangerKey as { id: string; key: string });
  roverPart = await partClients(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
});

test.after.always(async () => {
  for (const c of [owner, operator, stranger, roverPart]) c?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

test.serial('part config set refuses an invalid file with every error, saves a valid one as revision 1, and get prints it', async (t) => {
  const bad = join(cloud.dataDir, 'bad.json');
  writeFileSync(
    bad,
    JSON.stringify({
      components: [
        { name: 'a', api: 'core:widget:x', model: 'fake' },
        sensor('b'),
        sensor('b'),
        { ...sensor('c'), model: 'nosuch' },
        { ...sensor('d'), depends_on: ['e'] },
        { ...sensor('e'), depends_on: ['d'] },
        { name: 'f', api: 'core:component:board', model: 'fake', attributes: { analogs: 'x' } },
      ],
    }),
  );
  const err = (await t.throwsAsync(cli(cloud.dataDir, ['part', 'config', 'set', '--part', rover.part_id, bad]))) as Error & { code?: number; stderr?: string };
  t.is(err.code, 1);
  t.regex(String(err.stderr), /components\[0\]\.api "core:widget:x": kind must be component or service/);
  t.regex(String(err.stderr), /components\[2\]\.name "b": duplicate name, already used by components\[1\]/);
  t.regex(String(err.stderr), /components\[3\]\.model "nosuch": unknown model for core:component:sensor/);
  t.regex(String(err.stderr), /components\[4\] "d": dependency cycle: d -> e -> d/);
  t.regex(String(err.stderr), /components\[6\]\.attributes\.analogs/);
  // Nothing was saved: the part still has no revision.
  const none = JSON.parse((await cli(cloud.dataDir, ['part', 'config', 'get', '--part', rover.part_id, '--json'])).stdout) as { revision: number };
  t.is(none.revision, 0);
  const withCloud = join(cloud.dataDir, 'with-cloud.json');
  writeFileSync(withCloud, JSON.stringify({ cloud: { id: rover.part_id, secret: rover.part_secret }, components: [sensor('thermometer')] }));
  const refused = (await t.throwsAsync(cli(cloud.dataDir, ['part', 'config', 'set', '--part', rover.part_id, withCloud]))) as Error & { stderr?: string };
  t.regex(String(refused.stderr), /cloud: must not be saved in the cloud/);
  const good = join(cloud.dataDir, 'good.json');
  writeFileSync(good, JSON.stringify({ components: [sensor('thermometer')] }));
  const { stdout } = await cli(cloud.dataDir, ['part', 'config', 'set', '--part', rover.part_id, good]);
  t.is(stdout.trim(), '1');
  const got = JSON.parse((await cli(cloud.dataDir, ['part', 'config', 'get', '--part', rover.part_id, '--json'])).stdout) as {
    revision: number;
    config: unknown;
    saved_by: string;
  };
  t.is(got.revision, 1);
  t.is(got.saved_by, 'admin');
  t.deepEqual(got.config, { components: [sensor('thermometer')] });
});

test.serial('AppService: any role reads, owners update, other organizations are refused, and history keeps who and when', async (t) => {
  const read = await call(operator.app.getRobotPart.bind(operator.app), { id: rover.part_id }, operator.md);
  t.is(read.part?.configRevision, 1);
  t.is(read.part?.machineId, rover.machine_id);
  t.is(read.part?.id, rover.part_id);
  t.is(read.part?.name, 'rover-main');
  t.deepEqual(read.part?.robotConfig, { components: [sensor('thermometer')] });
  const denied = await t.throwsAsync(call(operator.app.updateRobotPart.bind(operator.app), { id: rover.part_id, robotConfig: {} }, operator.md));
  t.is((denied as { code?: number }).code, status.PERMISSION_DENIED);
  const foreign = await t.throwsAsync(call(stranger.app.getRobotPart.bind(stranger.app), { id: rover.part_id }, stranger.md));
  t.is((foreign as { code?: number }).code, status.PERMISSION_DENIED);
  const invalid = await t.throwsAsync(
    call(
      owner.app.updateRobotPart.bind(owner.app),
      { id: rover.part_id, robotConfig: { components: [sensor('x'), { ...sensor('y'), depends_on: ['z'] }] } },
      owner.md,
    ),
  );
  t.is((invalid as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex((invalid as Error).message, /components\[1\] "y": depends on "z", which is not configured/);
  // Every error is listed: a top-level one does not hide a resource's own (issue 29).
  const both = await t.throwsAsync(
    call(
      owner.app.updateRobotPart.bind(owner.app),
      {
        id: rover.part_id,
        robotConfig: {
          session: { heartbeat_window: 'soon' },
          components: [
            { name: 'b', api: 'core:component:board', model: 'fake' },
            { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '1', dir: '2' } } },
          ],
        },
      },
      owner.md,
    ),
  );
  t.is((both as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex((both as Error).message, /session\.heartbeat_window "soon"/);
  t.regex((both as Error).message, /components\[1\]\.attributes\.max_rpm: is required when the motor has no encoder/);
  const updated = await call(
    owner.app.updateRobotPart.bind(owner.app),
    { id: rover.part_id, robotConfig: { components: [sensor('thermometer'), sensor('hygrometer')] } },
    owner.md,
  );
  t.is(updated.part?.configRevision, 2);
  const history = await call(operator.app.getRobotPartHistory.bind(operator.app), { id: rover.part_id }, operator.md);
  t.deepEqual(
    history.history.map((h) => h.revision),
    [2, 1],
  );
  t.regex(history.history[0].savedBy, /^API key \S+ \(owner of organization/);
  t.is(history.history[1].savedBy, 'admin');
  t.true(history.history[0].time! >= history.history[1].time!);
});

test.serial('RobotService: a part reads and watches only its own config', async (t) => {
  const own = await call(roverPart.robot.config.bind(roverPart.robot), { id: rover.part_id }, roverPart.md);
  t.is(own.revision, 2);
  const notMine = await t.throwsAsync(call(roverPart.robot.config.bind(roverPart.robot), { id: other.part_id }, roverPart.md));
  t.is((notMine as { code?: number }).code, status.PERMISSION_DENIED);
  // The stream sends what the machine does not know yet, then each new revision.
  const stream = roverPart.robot.watchConfig({ id: rover.part_id, knownRevision: 1 }, roverPart.md);
  const got = collect<ConfigResponse>(stream, (items) => items.length === 2);
  await new Promise((r) => setTimeout(r, 300));
  await call(owner.app.updateRobotPart.bind(owner.app), { id: rover.part_id, robotConfig: { components: [sensor('barometer')] } }, owner.md);
  const revisions = await got;
  t.deepEqual(
    revisions.map((r) => r.revision),
    [2, 3],
  );
  t.deepEqual(revisions[1].config, { components: [sensor('barometer')] });
});

test.serial('logs uploaded by the machine are queried by level, time and text, paged, tailed, and printed by part logs', async (t) => {
  const base = Date.now() - 60_000;
  const entry = (i: number, level: string, message: string): LogEntry => ({
    time: new Date(base + i * 1000),
    level,
    loggerName: `platform.components.sensor.s${i % 2}`,
    message,
    fields: { i },
  });
  const tail = operator.app.tailRobotPartLogs({ id: rover.part_id, levels: ['error'] }, operator.md);
  const tailed = collect(tail, (items) => items.length >= 1);
  await new Promise((r) => setTimeout(r, 300));
  const logs = [
    entry(0, 'info', 'started'),
    entry(1, 'warn', 'Battery low'),
    entry(2, 'error', 'sensor failed'),
    entry(3, 'info', 'battery charged'),
    entry(4, 'debug', 'tick'),
  ];
  await call(roverPart.robot.log.bind(roverPart.robot), { id: rover.part_id, logs }, roverPart.md);
  const errorsOnly = await call(
    operator.app.getRobotPartLogs.bind(operator.app),
    { id: rover.part_id, levels: ['error'], filter: '', pageToken: '', limit: 0 },
    operator.md,
  );
  t.deepEqual(
    errorsOnly.logs.map((l) => l.message),
    ['sensor failed'],
  );
  t.deepEqual(errorsOnly.logs[0].fields, { i: 2 });
  const battery = await call(
    operator.app.getRobotPartLogs.bind(operator.app),
    { id: rover.part_id, levels: [], filter: 'BATTERY', pageToken: '', limit: 0 },
    operator.md,
  );
  t.deepEqual(
    battery.logs.map((l) => l.message),
    ['battery charged', 'Battery low'],
  );
  const window = await call(
    operator.app.getRobotPartLogs.bind(operator.app),
    { id: rover.part_id, levels: [], filter: '', start: new Date(base + 1000), end: new Date(base + 3000), pageToken: '', limit: 0 },
    operator.md,
  );
  t.deepEqual(
    window.logs.map((l) => l.message),
    ['sensor failed', 'Battery low'],
  );
  const page1 = await call(
    operator.app.getRobotPartLogs.bind(operator.app),
    { id: rover.part_id, levels: [], filter: '', pageToken: '', limit: 3 },
    operator.md,
  );
  const page2 = await call(
    operator.app.getRobotPartLogs.bind(operator.app),
    { id: rover.part_id, levels: [], filter: '', pageToken: page1.nextPageToken, limit: 3 },
    operator.md,
  );
  t.deepEqual(
    [...page1.logs, ...page2.logs].map((l) => l.message),
    ['tick', 'battery charged', 'sensor failed', 'Battery low', 'started'],
  );
  t.is(page2.nextPageToken, '');
  t.deepEqual(
    (await tailed).flatMap((r) => (r as { logs: LogEntry[] }).logs.map((l) => l.message)),
    ['sensor failed'],
  );
  const badLevel = await t.throwsAsync(
    call(operator.app.getRobotPartLogs.bind(operator.app), { id: rover.part_id, levels: ['loud'], filter: '', pageToken: '', limit: 0 }, operator.md),
  );
  t.regex((badLevel as Error).message, /levels\[0\] "loud": must be one of debug, info, warn, error/);
  const printed = (await cli(cloud.dataDir, ['part', 'logs', '--part', rover.part_id, '--level', 'warn', 'info', '--grep', 'battery'])).stdout
    .trim()
    .split('\n');
  t.is(printed.length, 2);
  t.regex(printed[0], /WARN +platform\.components\.sensor\.s1 Battery low/);
  t.regex(printed[1], /INFO +platform\.components\.sensor\.s1 battery charged/);
  const since = JSON.parse(
    (await cli(cloud.dataDir, ['part', 'logs', '--part', rover.part_id, '--since', new Date(base + 2500).toISOString(), '--json'])).stdout,
  ) as { time: string; level: string; logger_name: string; message: string; fields: Record<string, unknown> }[];
  t.deepEqual(
    since.map((e) => e.message),
    ['battery charged', 'tick'],
  );
  t.deepEqual(since[0], {
    time: new Date(base + 3000).toISOString(),
    level: 'info',
    logger_name: 'platform.components.sensor.s1',
    message: 'battery charged',
    fields: { i: 3 },
  });
  const badSince = (await t.throwsAsync(cli(cloud.dataDir, ['part', 'logs', '--part', rover.part_id, '--since', 'yesterday']))) as Error & { stderr?: string };
  t.regex(String(badSince.stderr), /--since "yesterday": must be a time such as/);
});

test.serial('a status report shows the part online with its runtime version and its resources that are not ready', async (t) => {
  await call(
    roverPart.robot.reportStatus.bind(roverPart.robot),
    {
      id: rover.part_id,
      runtimeVersion: '9.8.7',
      machineState: 'running',
      configRevision: 3,
      configError: '',
      notReady: [{ name: 'b', state: 'unhealthy', error: 'boom' }],
      resourceCount: 2,
    },
    roverPart.md,
  );
  const { part } = await call(operator.app.getRobotPart.bind(operator.app), { id: rover.part_id }, operator.md);
  t.true(part?.online);
  t.is(part?.runtimeVersion, '9.8.7');
  t.deepEqual(part?.lastStatus?.notReady, [{ name: 'b', state: 'unhealthy', error: 'boom' }]);
  t.truthy(part?.lastAccess);
  const never = await call(operator.app.getRobotPart.bind(operator.app), { id: other.part_id }, operator.md);
  t.false(never.part?.online);
  t.is(never.part?.configRevision, 0);
});

test.serial('agent config set writes the agent and maintenance objects into the part config, the one source of truth', async (t) => {
  const file = join(cloud.dataDir, 'agent.json');
  writeFileSync(
    file,
    JSON.stringify({
      agent: { advanced_settings: { debug: true } },
      maintenance: { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'ok' },
    }),
  );
  await cli(cloud.dataDir, ['agent', 'config', 'set', '--machine', rover.machine_id, '--file', file]);
  const { part } = await call(operator.app.getRobotPart.bind(operator.app), { id: rover.part_id }, operator.md);
  t.is(part?.configRevision, 4);
  t.deepEqual(part?.robotConfig?.components, [sensor('barometer')]);
  t.deepEqual(part?.robotConfig?.agent, { advanced_settings: { debug: true } });
  t.is(part?.robotConfig?.maintenance?.maintenance_allowed_key, 'ok');
  // AgentDeviceService answers from the same stored config, whichever way it was saved.
  const device = new AgentDeviceServiceClient(cloud.address, credentials.createInsecure());
  t.teardown(() => device.close());
  const ask = () =>
    call(
      device.deviceAgentConfig.bind(device),
      { partId: rover.part_id, hostInfo: { platform: 'linux/amd64', hostname: 'h', distro: '' }, versions: {}, requested: {} },
      roverPart.md,
    );
  const fromAdmin = await ask();
  t.deepEqual(fromAdmin.agentConfig, { advanced_settings: { debug: true } });
  t.is(fromAdmin.maintenance?.maintenance_allowed_key, 'ok');
  await call(
    owner.app.updateRobotPart.bind(owner.app),
    {
      id: rover.part_id,
      robotConfig: {
        components: [sensor('barometer')],
        agent: { advanced_settings: { debug: false } },
        maintenance: { sensor_name: 'core:component:sensor/barometer', maintenance_allowed_key: 'calm' },
      },
    },
    owner.md,
  );
  const fromUpdate = await ask();
  t.deepEqual(fromUpdate.agentConfig, { advanced_settings: { debug: false } });
  t.deepEqual(fromUpdate.maintenance, { sensor_name: 'core:component:sensor/barometer', maintenance_allowed_key: 'calm' });
});
