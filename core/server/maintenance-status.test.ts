// A reconfiguration held back by the maintenance window is visible: GetMachineStatus names the pending
// revision and why it waits, and the wait is logged once, not at every retry.
import test from 'ava';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const sensor = (name: string, readings: Record<string, unknown>) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings } });
const maintenance = { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' };

test('GetMachineStatus shows the pending revision and the reason while the maintenance window defers it', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor('gate', { allowed: false }), sensor('s', { v: 1 })], maintenance });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.is((await call(robot, 'getMachineStatus', {})).pendingConfig, undefined);

  runtime.writeConfig({ components: [sensor('gate', { allowed: false }), sensor('s', { v: 2 })], maintenance });
  const waiting = await eventually(
    () => call(robot, 'getMachineStatus', {}),
    (s) => s.pendingConfig !== undefined,
  );
  t.is(waiting.pendingConfig.revision, 2);
  t.is(waiting.pendingConfig.reason, 'maintenance sensor reading allowed is false');
  t.true(waiting.pendingConfig.since instanceof Date);
  // Several retries later (one a second), the wait is still logged once.
  await new Promise((r) => setTimeout(r, 2500));
  t.is(runtime.logs().filter((l) => l.msg === 'reconfiguration deferred by the maintenance window').length, 1);

  await call(sensors, 'doCommand', { name: 'gate', command: { set: { allowed: true } } });
  await eventually(
    () => call(sensors, 'getReadings', { name: 's' }),
    (r) => r.readings.v === 2,
  );
  t.is((await call(robot, 'getMachineStatus', {})).pendingConfig, undefined);
});
