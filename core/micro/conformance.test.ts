// One API conformance suite, run against both runtimes with the same config file: the real
// platform-server and the real platform-micro-server, each on its own free port. Every case calls the
// same method with the same request on both, in the same order (so that state they change, a GPIO level
// or a motor's power, changes alike), and the answers must be equal: the same response, or the same
// status code with the same message. Only what differs by nature is masked: times and session ids.
// The micro-server is the shipped file, built here and run as the installed command runs it (its first
// line: V8's lite mode, no JIT), so that the suite covers the bundle and the interpreter it runs in.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMicro } from '../../scripts/build-micro.mjs';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { CameraServiceClient } from '../../gen/platform/component/camera/v1/camera.js';
import { EncoderServiceClient, PositionType } from '../../gen/platform/component/encoder/v1/encoder.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { ResourceState, RobotServiceClient, type StreamLogsResponse } from '../../gen/platform/robot/v1/robot.js';
import type { ServiceError } from '@grpc/grpc-js';
import { call, insecure } from '../server/testing/grpc.js';
import { listServices } from '../server/testing/reflection.js';
import type { ServingProgram } from '../serving/testing/spawn-serving.js';
import { conformanceConfig } from './testing/conformance-config.js';
import { spawnFullServer, spawnMicro } from './testing/spawn-micro.js';

interface Clients {
  robot: InstanceType<typeof RobotServiceClient>;
  board: InstanceType<typeof BoardServiceClient>;
  motor: InstanceType<typeof MotorServiceClient>;
  encoder: InstanceType<typeof EncoderServiceClient>;
  sensor: InstanceType<typeof SensorServiceClient>;
  camera: InstanceType<typeof CameraServiceClient>;
  dataManager: InstanceType<typeof DataManagerServiceClient>;
  address: string;
  /** Per-runtime values a later case refers to (its own session id). */
  saved: Record<string, string>;
}

function clientsFor(address: string): Clients {
  return {
    robot: new RobotServiceClient(address, insecure()),
    board: new BoardServiceClient(address, insecure()),
    motor: new MotorServiceClient(address, insecure()),
    encoder: new EncoderServiceClient(address, insecure()),
    sensor: new SensorServiceClient(address, insecure()),
    camera: new CameraServiceClient(address, insecure()),
    dataManager: new DataManagerServiceClient(address, insecure()),
    address,
    saved: {},
  };
}

/** Times differ between two runs by nature; everything else must not. */
function masked(value: unknown, key = ''): unknown {
  if (value instanceof Date) return '<time>';
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map((v) => masked(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, k)]));
  }
  if (typeof value === 'string' && /(^|_)(time|since|last_successful_sync)$|^lastUpdated$/i.test(key)) return '<time>';
  return value;
}

type Outcome = { ok: unknown } | { code: number; details: string };

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: masked(await run()) };
  } catch (err) {
    const e = err as ServiceError;
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, details: e.details };
  }
}

/** The first message or the error of a server stream (StreamLogs). */
function firstOfStream(stream: NodeJS.EventEmitter & { cancel(): void }): Promise<unknown> {
  return new Promise((resolve, reject) => {
    stream.once('data', (m: StreamLogsResponse) => (resolve({ streams: true, hasLine: Boolean(m) }), stream.cancel()));
    stream.once('error', (err: ServiceError) => (err.code === 1 ? undefined : reject(err)));
  });
}

/** A case: what it calls, and the status code both must answer with (0: an answer), so that two equal failures never pass as conformance. */
type Case = [label: string, expected: number, run: (c: Clients) => Promise<unknown>];

const OK = 0;
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;

const sortedNames = async (c: Clients) => {
  const res = (await call(c.robot, 'resourceNames', {})) as { resources: { name: string }[] };
  return [...res.resources].sort((a, b) => a.name.localeCompare(b.name));
};

const cases: Case[] = [
  // RobotService
  ['GetVersion', OK, (c) => call(c.robot, 'getVersion', {})],
  ['ResourceNames', OK, sortedNames],
  ['GetMachineStatus', OK, (c) => call(c.robot, 'getMachineStatus', {})],
  ['GetConfig', OK, (c) => call(c.robot, 'getConfig', {})],
  ['SaveConfig of an invalid config', OK, (c) => call(c.robot, 'saveConfig', { configJson: '{"components": 5}' })],
  ['SaveConfig of text that is not JSON', OK, (c) => call(c.robot, 'saveConfig', { configJson: 'not json' })],
  ['StreamLogs with an unknown level', INVALID_ARGUMENT, (c) => firstOfStream(c.robot.streamLogs({ minLevel: 'loud', backlog: 0 }))],
  ['StreamLogs with a backlog', OK, (c) => firstOfStream(c.robot.streamLogs({ minLevel: 'info', backlog: 1 }))],
  [
    'StartSession',
    OK,
    async (c) => {
      const res = (await call(c.robot, 'startSession', { resume: '' })) as { id: string };
      c.saved.session = res.id;
      return { ...res, id: res.id ? '<id>' : '' };
    },
  ],
  ['SendSessionHeartbeat', OK, (c) => call(c.robot, 'sendSessionHeartbeat', { id: c.saved.session })],
  ['SendSessionHeartbeat of an unknown session', INVALID_ARGUMENT, (c) => call(c.robot, 'sendSessionHeartbeat', { id: 'no-such-session' })],
  ['StartSession resuming an unknown session', NOT_FOUND, (c) => call(c.robot, 'startSession', { resume: 'no-such-session' })],
  // SensorService
  ['GetReadings', OK, (c) => call(c.sensor, 'getReadings', { name: 'thermo' })],
  ['GetReadings of an unknown resource', NOT_FOUND, (c) => call(c.sensor, 'getReadings', { name: 'nope' })],
  ['GetReadings without a name', INVALID_ARGUMENT, (c) => call(c.sensor, 'getReadings', { name: '' })],
  ['GetReadings of a board', NOT_FOUND, (c) => call(c.sensor, 'getReadings', { name: 'board1' })],
  ['sensor DoCommand set', OK, (c) => call(c.sensor, 'doCommand', { name: 'thermo', command: { set: { celsius: 30 } } })],
  ['GetReadings after set', OK, (c) => call(c.sensor, 'getReadings', { name: 'thermo' })],
  ['sensor DoCommand unknown', OK, (c) => call(c.sensor, 'doCommand', { name: 'thermo', command: { explode: {} } })],
  // BoardService
  ['SetGPIO', OK, (c) => call(c.board, 'setGpio', { name: 'board1', pin: '5', high: true })],
  ['GetGPIO', OK, (c) => call(c.board, 'getGpio', { name: 'board1', pin: '5' })],
  ['GetGPIO of another pin', OK, (c) => call(c.board, 'getGpio', { name: 'board1', pin: '6' })],
  ['GetGPIO without a pin', INVALID_ARGUMENT, (c) => call(c.board, 'getGpio', { name: 'board1', pin: '' })],
  ['SetPWM', OK, (c) => call(c.board, 'setPwm', { name: 'board1', pin: '7', dutyPct: 0.25 })],
  ['PWM', OK, (c) => call(c.board, 'pwm', { name: 'board1', pin: '7' })],
  ['SetPWM out of range', INVALID_ARGUMENT, (c) => call(c.board, 'setPwm', { name: 'board1', pin: '7', dutyPct: 1.5 })],
  ['SetPWMFrequency', OK, (c) => call(c.board, 'setPwmFrequency', { name: 'board1', pin: '7', frequencyHz: 1000 })],
  ['PWMFrequency', OK, (c) => call(c.board, 'pwmFrequency', { name: 'board1', pin: '7' })],
  ['ReadAnalogReader', OK, (c) => call(c.board, 'readAnalogReader', { boardName: 'board1', analogReaderName: 'pot' })],
  ['ReadAnalogReader of an unknown reader', INVALID_ARGUMENT, (c) => call(c.board, 'readAnalogReader', { boardName: 'board1', analogReaderName: 'nope' })],
  ['board DoCommand tick', OK, (c) => call(c.board, 'doCommand', { name: 'board1', command: { tick: { name: 'si', count: 3 } } })],
  ['GetDigitalInterruptValue', OK, (c) => call(c.board, 'getDigitalInterruptValue', { boardName: 'board1', digitalInterruptName: 'si' })],
  ['GetDigitalInterruptValue unknown', INVALID_ARGUMENT, (c) => call(c.board, 'getDigitalInterruptValue', { boardName: 'board1', digitalInterruptName: 'zz' })],
  ['esp32 SetPWMFrequency', OK, (c) => call(c.board, 'setPwmFrequency', { name: 'esp1', pin: '12', frequencyHz: 5000 })],
  ['esp32 GetGPIO of a pin it lacks', OK, (c) => call(c.board, 'getGpio', { name: 'esp1', pin: '99' })],
  // EncoderService
  ['encoder GetPosition', OK, (c) => call(c.encoder, 'getPosition', { name: 'enc-s', positionType: PositionType.POSITION_TYPE_UNSPECIFIED })],
  [
    'encoder GetPosition in degrees',
    INVALID_ARGUMENT,
    (c) => call(c.encoder, 'getPosition', { name: 'enc-q', positionType: PositionType.POSITION_TYPE_ANGLE_DEGREES }),
  ],
  ['encoder GetProperties', OK, (c) => call(c.encoder, 'getProperties', { name: 'enc-q' })],
  ['encoder ResetPosition', OK, (c) => call(c.encoder, 'resetPosition', { name: 'enc-f' })],
  ['fake encoder GetPosition', OK, (c) => call(c.encoder, 'getPosition', { name: 'enc-f', positionType: PositionType.POSITION_TYPE_TICKS_COUNT })],
  ['fake encoder DoCommand', OK, (c) => call(c.encoder, 'doCommand', { name: 'enc-f', command: { set_position: 42 } })],
  ['encoder of a motor', NOT_FOUND, (c) => call(c.encoder, 'getProperties', { name: 'm1' })],
  // MotorService
  ['motor GetProperties', OK, (c) => call(c.motor, 'getProperties', { name: 'm1' })],
  ['motor IsPowered', OK, (c) => call(c.motor, 'isPowered', { name: 'm1' })],
  ['motor SetPower', OK, (c) => call(c.motor, 'setPower', { name: 'm1', powerPct: 0.5 })],
  ['motor IsPowered after SetPower', OK, (c) => call(c.motor, 'isPowered', { name: 'm1' })],
  ['motor IsMoving', OK, (c) => call(c.motor, 'isMoving', { name: 'm1' })],
  ['the motor PWM pin', OK, (c) => call(c.board, 'pwm', { name: 'board1', pin: '1' })],
  ['StopAll', OK, (c) => call(c.robot, 'stopAll', {})],
  ['motor IsPowered after StopAll', OK, (c) => call(c.motor, 'isPowered', { name: 'm1' })],
  ['motor SetPower out of range', OK, (c) => call(c.motor, 'setPower', { name: 'm1', powerPct: 2 })],
  ['motor GoFor at 0 rpm', INVALID_ARGUMENT, (c) => call(c.motor, 'goFor', { name: 'm1', rpm: 0, revolutions: 1 })],
  ['motor GoTo without an encoder', UNIMPLEMENTED, (c) => call(c.motor, 'goTo', { name: 'm1', rpm: 10, positionRevolutions: 1 })],
  ['motor SetRPM', OK, (c) => call(c.motor, 'setRpm', { name: 'mf', rpm: 0 })],
  ['motor Stop', OK, (c) => call(c.motor, 'stop', { name: 'mf' })],
  ['motor ResetZeroPosition', OK, (c) => call(c.motor, 'resetZeroPosition', { name: 'mf', offset: 0 })],
  ['motor GetPosition', OK, (c) => call(c.motor, 'getPosition', { name: 'mf' })],
  ['motor GetProperties with an encoder', OK, (c) => call(c.motor, 'getProperties', { name: 'mf' })],
  ['motor of a sensor', NOT_FOUND, (c) => call(c.motor, 'stop', { name: 'thermo' })],
  // CameraService
  ['camera GetProperties', OK, (c) => call(c.camera, 'getProperties', { name: 'cam' })],
  ['camera GetImage png', OK, (c) => call(c.camera, 'getImage', { name: 'cam', mimeType: 'image/png' })],
  ['camera GetImage default', OK, (c) => call(c.camera, 'getImage', { name: 'cam', mimeType: '' })],
  ['camera GetImage of an unknown type', INVALID_ARGUMENT, (c) => call(c.camera, 'getImage', { name: 'cam', mimeType: 'image/gif' })],
  ['camera GetPointCloud', OK, (c) => call(c.camera, 'getPointCloud', { name: 'cam', mimeType: 'pointcloud/pcd' })],
  // DataManagerService
  ['data manager status', OK, (c) => call(c.dataManager, 'doCommand', { name: 'dm', command: { status: {} } })],
  ['data manager Sync', OK, (c) => call(c.dataManager, 'sync', { name: 'dm' })],
  ['data manager DoCommand unknown', INTERNAL, (c) => call(c.dataManager, 'doCommand', { name: 'dm', command: { nope: {} } })],
  // Last: the state of everything after all of the above, then an orderly stop.
  ['GetMachineStatus at the end', OK, (c) => call(c.robot, 'getMachineStatus', {})],
  ['reflection lists the same services', OK, async (c) => (await listServices(c.address)).sort()],
];

let full: ServingProgram;
let micro: ServingProgram;
const clients: { full?: Clients; micro?: Clients } = {};

test.before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-conformance-'));
  const configPath = join(dir, 'machine.json');
  writeFileSync(configPath, JSON.stringify(conformanceConfig(join(dir, 'capture')), null, 2));
  const bundle = join(dir, 'platform-micro-server.mjs');
  await buildMicro(bundle);
  [full, micro] = await Promise.all([spawnFullServer(configPath, dir), spawnMicro(configPath, dir, { bundle })]);
  clients.full = clientsFor(full.address);
  clients.micro = clientsFor(micro.address);
});

test.after.always(async () => {
  await Promise.all([full?.stop(), micro?.stop()]);
});

test.serial('every method of the supported APIs answers the same on platform-server and platform-micro-server', async (t) => {
  const differences: string[] = [];
  for (const [label, expected, run] of cases) {
    const a = await outcome(() => run(clients.full!));
    const b = await outcome(() => run(clients.micro!));
    const code = (o: Outcome) => ('ok' in o ? OK : o.code);
    if (code(a) !== expected) differences.push(`${label}: platform-server answered ${JSON.stringify(a)}, expected code ${expected}`);
    if (JSON.stringify(a) !== JSON.stringify(b))
      differences.push(`${label}\n  platform-server:       ${JSON.stringify(a)}\n  platform-micro-server: ${JSON.stringify(b)}`);
  }
  t.deepEqual(differences, [], differences.join('\n'));
  // Equal answers of a machine whose resources did not all start would prove little.
  const { resources } = (await call(clients.micro!.robot, 'getMachineStatus', {})) as { resources: { state: ResourceState }[] };
  t.is(resources.length, 10);
  t.true(resources.every((r) => r.state === ResourceState.RESOURCE_STATE_READY));
});

test.serial('Shutdown answers the same and both runtimes exit 0', async (t) => {
  const a = await outcome(() => call(clients.full!.robot, 'shutdown', {}));
  const b = await outcome(() => call(clients.micro!.robot, 'shutdown', {}));
  t.deepEqual(b, a);
  t.deepEqual(await Promise.all([full.exited, micro.exited]), [0, 0]);
});
