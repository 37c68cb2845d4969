// The CommonJS bundles that scripts/build.mjs makes for driver workers (npm test builds dist/ first):
// the worker host bundle constructs built-in drivers, and every built-in driver's bundle loads.
import test from 'ava';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const require = createRequire(import.meta.url);

function bundles(dir: string, found: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) bundles(full, found);
    else if (entry === 'driver.bundle.cjs') found.push(full);
  }
  return found;
}

test('every built-in driver has a bundle that exports its factory', (t) => {
  const found = bundles(join(dist, 'drivers'));
  t.true(found.length >= 11, `bundles found: ${found.join(', ')}`);
  for (const path of found) t.is(typeof (require(path) as { default?: unknown }).default, 'function', path);
});

test('the host bundle builds a built-in driver and serves it over the kernel channel', async (t) => {
  const pool = new Piscina({ filename: join(dist, 'core/workers/driver-host.cjs'), minThreads: 1, maxThreads: 1, atomics: 'disabled' });
  t.teardown(() => pool.destroy());
  const { port1, port2 } = new MessageChannel();
  const outcome = await pool.run(
    {
      op: 'construct',
      driverUrl: new URL('drivers/sensor/fake/driver.js', `file://${dist}`).href,
      name: 's',
      api: 'core:component:sensor',
      model: 'fake',
      attributes: { readings: { t: 21 }, count_calls: false, noise: 0 },
      dependencies: [],
      kernelPort: port1,
      logger: 'platform.components.sensor.s',
      logLevel: 'info',
    },
    { transferList: [port1] },
  );
  t.deepEqual(outcome, { ok: true, value: null });
  const answer = await new Promise((resolve) => {
    port2.once('message', resolve);
    port2.postMessage({ id: 1, method: 'getReadings', args: [] });
  });
  port2.close();
  t.deepEqual(answer, { id: 1, outcome: { ok: true, value: { t: 21 } } });
});
