// Drivers hosted in platform-micro-server's main thread (in-process-hosting.ts): the same driver errors
// as from a worker, a per-call timeout, and an error a driver throws from its own timer failing only that
// resource.
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { defineDriver } from '../../plugins/driver.js';
import { DriverError } from '../../plugins/errors.js';
import { InProcessHosting } from './in-process-hosting.js';

const run = promisify(execFile);

const sensor = defineDriver(() => ({
  async getReadings() {
    return { a: 1 };
  },
  async broken() {
    throw Object.assign(new Error('the sensor is unplugged'), { code: 'FAILED_PRECONDITION' });
  },
  hang() {
    return new Promise(() => undefined);
  },
  close() {},
}));

const construction = (name: string) => ({
  driverUrl: 'file:///unused.js',
  name,
  api: 'core:component:sensor',
  model: 'test',
  attributes: {},
  dependencies: [],
  logger: `platform.components.sensor.${name}`,
  logLevel: 'info' as const,
});

function host(callTimeoutMs = 60_000) {
  const crashes: Error[] = [];
  const handle = new InProcessHosting((_api, model) => (model === 'test' ? sensor : undefined), callTimeoutMs).create('core:component:sensor/s', {
    onCrash: (e) => crashes.push(e),
    onLog: () => undefined,
  });
  return { handle, crashes };
}

test('a driver error in a call is an error of that call, naming the resource; the driver keeps serving', async (t) => {
  const { handle, crashes } = host();
  await handle.construct(construction('s'), 1000);
  const err = await t.throwsAsync(handle.call('broken', []), { instanceOf: DriverError });
  t.is(err.code, 'FAILED_PRECONDITION');
  t.is(err.message, 'the sensor is unplugged');
  t.is(err.resource, 's');
  t.deepEqual(await handle.call('getReadings', []), { a: 1 });
  const missing = await t.throwsAsync(handle.call('nope', []), { instanceOf: DriverError });
  t.is(missing.code, 'UNIMPLEMENTED');
  t.true(handle.alive);
  t.deepEqual(crashes, []);
});

test('a call that does not answer within the call timeout fails with DEADLINE_EXCEEDED', async (t) => {
  const { handle } = host(50);
  await handle.construct(construction('s'), 1000);
  const err = await t.throwsAsync(handle.call('hang', []), { instanceOf: DriverError });
  t.is(err.code, 'DEADLINE_EXCEEDED');
  t.regex(err.message, /hang of core:component:sensor\/s did not answer within 50 ms/);
  t.deepEqual(await handle.call('getReadings', []), { a: 1 });
});

test('a model without a driver here fails its construction, not the process', async (t) => {
  const { handle } = host();
  const err = await t.throwsAsync(handle.construct({ ...construction('s'), model: 'other' }, 1000), { instanceOf: DriverError });
  t.regex(err.message, /has no driver in platform-micro-server/);
});

test('an error a driver throws from its own timer fails that resource only', async (t) => {
  const fixture = fileURLToPath(new URL('./fixtures/crash-attribution.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', fixture], { timeout: 60_000 });
  const result = JSON.parse(stdout.trim()) as Record<string, unknown>;
  t.deepEqual(result.crashed, ['bomb: timebomb went off']);
  t.is(result.unowned, 0);
  t.false(result.bombAlive);
  t.true(result.calmAlive);
  t.is(result.calm, 'pong');
  t.is(result.afterCrash, 'UNAVAILABLE: core:component:generic/bomb is not running');
});
