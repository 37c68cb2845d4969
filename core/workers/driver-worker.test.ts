import test from 'ava';
import { DriverWorker } from './driver-worker.js';
import type { DriverLogLine as LogRecord } from './driver-hosting.js';

const sensorDriver = new URL('../../drivers/sensor/fake/driver.js', import.meta.url).href;
const relayDriver = new URL('./fixtures/relay-driver.js', import.meta.url).href;

function start(name: string, onCrash: (e: Error) => void = () => undefined, logs: LogRecord[] = []) {
  return new DriverWorker(name, { onCrash, onLog: (r) => logs.push(r) });
}

const base = { api: 'core:component:sensor', model: 'fake', dependencies: [], logger: 'platform.components.sensor.s', logLevel: 'debug' as const };

test('a driver is constructed in its worker and answers calls', async (t) => {
  const logs: LogRecord[] = [];
  const worker = start('s', undefined, logs);
  await worker.construct({ ...base, driverUrl: sensorDriver, name: 's', attributes: { readings: { t: 21 }, count_calls: true } }, 10_000);
  t.deepEqual(await worker.call('getReadings', []), { t: 21, count: 1 });
  t.deepEqual(await worker.call('getReadings', []), { t: 21, count: 2 });
  t.true(logs.some((l) => l.message === 'fake sensor constructed' && l.level === 'debug'));
  await worker.close(5_000);
});

test('driver errors come back as errors with their code, and the worker lives on', async (t) => {
  const worker = start('s');
  await worker.construct({ ...base, driverUrl: sensorDriver, name: 's', attributes: { readings: {}, count_calls: false } }, 10_000);
  const err = await t.throwsAsync(() => worker.call('noSuchMethod', []));
  t.is((err as { code?: string }).code, 'UNIMPLEMENTED');
  t.true(worker.alive);
  await worker.close(5_000);
});

test('a crash in the worker is reported once and later calls fail as unavailable', async (t) => {
  let crashes = 0;
  const worker = start('s', () => crashes++);
  await worker.construct({ ...base, driverUrl: sensorDriver, name: 's', attributes: { readings: {}, count_calls: false } }, 10_000);
  await worker.call('doCommand', [{ crash: true }]);
  for (let waited = 0; crashes === 0 && waited < 60_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  t.is(crashes, 1);
  t.false(worker.alive);
  const err = await t.throwsAsync(() => worker.call('getReadings', []));
  t.is((err as { code?: string }).code, 'UNAVAILABLE');
});

test('a construction that hangs times out and ends the worker', async (t) => {
  const worker = start('r');
  const err = await t.throwsAsync(() => worker.construct({ ...base, driverUrl: relayDriver, name: 'r', attributes: { source: 'x', hang: true } }, 300));
  t.is((err as { code?: string }).code, 'DEADLINE_EXCEEDED');
  t.false(worker.alive);
});

test('a dependent calls its dependency directly over a channel, and buffers are transferred', async (t) => {
  const sensor = start('s');
  await sensor.construct({ ...base, driverUrl: sensorDriver, name: 's', attributes: { readings: { v: 7 }, count_calls: false } }, 10_000);
  const relay = start('r');
  const port = await sensor.openChannel();
  await relay.construct(
    { ...base, driverUrl: relayDriver, name: 'r', attributes: { source: 's' }, dependencies: [{ name: 's', api: 'core:component:sensor', link: port }] },
    10_000,
  );
  t.deepEqual(await relay.call('getReadings', []), { relayed: { v: 7 } });
  const points = (await relay.call('points', [1000])) as Float32Array;
  t.true(points instanceof Float32Array);
  t.is(points.length, 1000);
  t.is(points[999], 1.5);
  // Arguments wrapped with transfer() move to the dependency's worker instead of being copied.
  const front = start('f');
  const relayPort = await relay.openChannel();
  await front.construct(
    { ...base, driverUrl: relayDriver, name: 'f', attributes: { source: 'r' }, dependencies: [{ name: 'r', api: 'core:component:sensor', link: relayPort }] },
    10_000,
  );
  t.deepEqual(await front.call('sendPoints', [1000]), { moved: true, sum: 500, length: 1000 });
  await front.close(5_000);
  await relay.close(5_000);
  await sensor.close(5_000);
});
