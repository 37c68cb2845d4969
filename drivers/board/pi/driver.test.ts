// This machine is no Raspberry Pi: the pi board and Linux I2C must fail with errors that say what they need.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { memoryLogger } from '../../motor/testing/in-process.js';
import { linuxI2C } from '../linux-i2c.js';
import { loadOptional } from '../optional-package.js';
import factory from './driver.js';
import { piBoardAttributes } from './model.js';

const isPi = (() => {
  try {
    return readFileSync('/proc/device-tree/model', 'utf8').includes('Raspberry Pi');
  } catch {
    return false;
  }
})();

(isPi ? test.skip : test)('the pi board refuses to start off a Raspberry Pi, naming what it needs', async (t) => {
  const attributes = piBoardAttributes.parse({ digital_interrupts: [{ name: 'enc', pin: '17' }] });
  const err = await t.throwsAsync(async () =>
    factory({
      name: 'pi',
      api: 'core:component:board',
      model: 'pi',
      attributes,
      logger: memoryLogger(),
      dependencies: {
        get: () => {
          throw new Error('none');
        },
        names: () => [],
      },
    }),
  );
  t.is((err as { code?: string }).code, 'FAILED_PRECONDITION');
  t.regex(err!.message, /the pi board needs a Raspberry Pi/);
});

test('pi board config: BCM pin numbers, default I2C bus 1', (t) => {
  t.deepEqual(piBoardAttributes.parse({}).i2c_buses, [{ name: '1', bus: 1 }]);
  const bad = piBoardAttributes.safeParse({ digital_interrupts: [{ name: 'x', pin: '54' }] });
  t.is(bad.error?.issues[0]?.message, 'must be a BCM GPIO number from 0 to 53, as a string');
});

test('a missing optional package is a clear error naming it and what it needs', async (t) => {
  const err = await t.throwsAsync(loadOptional('no-such-package-for-test', 'a Raspberry Pi'));
  t.is((err as { code?: string }).code, 'FAILED_PRECONDITION');
  t.regex(
    err!.message,
    /the optional package no-such-package-for-test could not be loaded .*it needs a Raspberry Pi\. Install it with: npm install no-such-package-for-test/,
  );
});

test('Linux I2C checks the bus name and transfer before touching the hardware', async (t) => {
  const i2c = linuxI2C({ '1': 1 });
  await t.throwsAsync(async () => i2c.i2cReadRegister('2', 0x40, 0, 1), { message: 'i2c bus "2": not configured on this board (configured: 1)' });
  await t.throwsAsync(async () => i2c.i2cReadRegister('1', 0x40, 300, 1), { message: 'i2c register 300: must be from 0 to 255' });
  await i2c.close();
});

test('a bus that cannot be opened (or a missing i2c-bus package) is FAILED_PRECONDITION saying why', async (t) => {
  const i2c = linuxI2C({ x: 250 });
  const err = await t.throwsAsync(async () => i2c.i2cReadRegister('x', 0x40, 0, 1));
  t.is((err as { code?: string }).code, 'FAILED_PRECONDITION');
  t.regex(err!.message, /i2c bus "x"(: cannot open \/dev\/i2c-250| \(\/dev\/i2c-250\) address 64)|the optional package i2c-bus could not be loaded/);
  await i2c.close();
});
