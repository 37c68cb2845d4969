// Sessions and StopAll end to end: the real platform-server, a real client process that commands
// motors and exits, and the real gRPC clients observing the motors.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Metadata, status } from '@grpc/grpc-js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually, spawnRuntime } from '../../core/server/testing/spawn-runtime.js';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('./testing/commanding-client.ts', import.meta.url));
const motor = (name: string, pwm: number) => ({
  name,
  api: 'core:component:motor',
  model: 'gpio',
  attributes: { board: 'b', pins: { pwm: String(pwm), dir: String(pwm + 1) }, max_rpm: 100 },
});
const components = [
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  motor('left', 10),
  motor('right', 20),
  motor('taken', 30),
  motor('mine', 40),
  { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } },
];
const powered = async (motors: MotorServiceClient, name: string) => (await call(motors, 'isPowered', { name })).isOn as boolean;

test('a client process that exits without a goodbye has its motors stopped; others keep running', async (t) => {
  const runtime = await spawnRuntime({ components, session: { heartbeat_window: '400ms' } });
  t.teardown(() => runtime.stop());
  const motors = new MotorServiceClient(runtime.address, insecure());
  // A call without a session: never stopped by a session's expiry.
  await call(motors, 'setPower', { name: 'mine', powerPct: 0.5 });

  const { stdout } = await run(process.execPath, ['--import', 'tsx', CLIENT, runtime.address, 'left', 'right', 'taken']);
  t.regex(stdout, /^commanded left,right,taken in session [0-9a-f-]{36}\n$/);
  // Another caller commands `taken` after the client: the client is no longer the last to command it.
  await call(motors, 'setPower', { name: 'taken', powerPct: 0.3 });

  await eventually(
    async () => [await powered(motors, 'left'), await powered(motors, 'right')],
    (p) => !p[0] && !p[1],
  );
  t.true(await powered(motors, 'mine'));
  t.true(await powered(motors, 'taken'));
  t.is((await call(motors, 'isPowered', { name: 'taken' })).powerPct, 0.3);
  const expiry = runtime.logs().find((l) => l.msg === 'session expired without a heartbeat; stopping the actuators it commanded last') as
    { resources: string[] } | undefined;
  t.deepEqual(expiry?.resources.sort(), ['left', 'right']);
});

test('a live session is kept by heartbeats; an expired id is refused naming the metadata; resume needs a live id', async (t) => {
  const runtime = await spawnRuntime({ components, session: { heartbeat_window: '1s' } });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  const motors = new MotorServiceClient(runtime.address, insecure());
  const started = await call(robot, 'startSession', { resume: '' });
  t.is(started.heartbeatWindow.seconds * 1000 + started.heartbeatWindow.nanos / 1e6, 1000);
  const withSession = new Metadata();
  withSession.set('platform-sid', started.id);
  await new Promise<void>((resolve, reject) => motors.setPower({ name: 'left', powerPct: 0.6 }, withSession, (err) => (err ? reject(err) : resolve())));
  // Heartbeats keep it alive across many windows (a count of heartbeats, not a timing).
  for (let i = 0; i < 15; i++) {
    await call(robot, 'sendSessionHeartbeat', { id: started.id });
    await new Promise((r) => setTimeout(r, 100));
  }
  t.true(await powered(motors, 'left'));
  t.is((await call(robot, 'startSession', { resume: started.id })).id, started.id);
  // Silence: the session expires and the motor stops.
  await eventually(
    () => powered(motors, 'left'),
    (on) => !on,
  );
  const refused = await t.throwsAsync(
    new Promise((resolve, reject) => motors.setPower({ name: 'left', powerPct: 0.6 }, withSession, (err) => (err ? reject(err) : resolve(undefined)))),
  );
  t.is((refused as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(refused!.message, /metadata platform-sid "[0-9a-f-]+": no live session with that id/);
  t.false(await powered(motors, 'left'));
  const heartbeat = await t.throwsAsync(call(robot, 'sendSessionHeartbeat', { id: started.id }));
  t.regex(heartbeat!.message, /id "[0-9a-f-]+": no live session/);
  const resume = await t.throwsAsync(call(robot, 'startSession', { resume: started.id }));
  t.is((resume as { code?: number }).code, status.NOT_FOUND);
});

test('StopAll stops every motor, whoever commanded it, and leaves other resources alone', async (t) => {
  const runtime = await spawnRuntime({ components });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  const motors = new MotorServiceClient(runtime.address, insecure());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  for (const name of ['left', 'right', 'taken']) await call(motors, 'setPower', { name, powerPct: 0.7 });
  const goFor = call(motors, 'goFor', { name: 'mine', rpm: 10, revolutions: 100 });
  await eventually(
    () => powered(motors, 'mine'),
    (on) => on,
  );
  await call(robot, 'stopAll', {});
  for (const name of ['left', 'right', 'taken', 'mine']) t.false(await powered(motors, name), name);
  // The GoFor that StopAll interrupted ends rather than turning on.
  await goFor;
  t.false(await powered(motors, 'mine'));
  t.deepEqual((await call(sensors, 'getReadings', { name: 'thermo' })).readings, { t: 1 });
});
