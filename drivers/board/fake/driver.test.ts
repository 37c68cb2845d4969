import test from 'ava';
import type { Board } from '../../../plugins/apis/board.js';
import { i2cDevice, type I2C } from '../../../plugins/apis/i2c.js';
import { createIncrementalEncoder } from '../../encoder/incremental/driver.js';
import { inProcess, memoryLogger } from '../../motor/testing/in-process.js';
import { createFakeBoard } from './driver.js';
import { fakeBoardAttributes } from './model.js';
import { powerFromPins } from './simulation.js';

const board = (raw: unknown) => createFakeBoard(fakeBoardAttributes.parse(raw));

test('edge log: every level change of an interrupt pin, numbered; rising edges count as ticks', (t) => {
  const b = board({
    digital_interrupts: [
      { name: 'x', pin: '7' },
      { name: 'y', pin: '8' },
    ],
  });
  const start = b.digitalInterruptEdges!(['x'], -1) as { cursor: number };
  t.is(start.cursor, 0);
  b.setGPIO('7', true);
  b.setGPIO('7', true); // no change, no edge
  b.setGPIO('8', true);
  b.setGPIO('7', false);
  const after = b.digitalInterruptEdges!(['x'], start.cursor);
  t.deepEqual(after, {
    cursor: 3,
    edges: [
      { interrupt: 'x', high: true, seq: 1 },
      { interrupt: 'x', high: false, seq: 3 },
    ],
    levels: { x: false },
    lost: false,
  });
  t.is(b.getDigitalInterruptValue('x'), 1);
  t.throws(() => b.digitalInterruptEdges!(['z'], 0), { message: /digital_interrupt_name "z": no such digital interrupt/ });
});

test('incremental encoder decodes quadrature written to the board pins by hand', async (t) => {
  const b = board({
    digital_interrupts: [
      { name: 'a', pin: '1' },
      { name: 'b', pin: '2' },
    ],
  });
  const encoder = await createIncrementalEncoder({ board: 'b', pins: { a: 'a', b: 'b' } }, inProcess<Board>(b), memoryLogger());
  t.teardown(() => encoder.close());
  const forward = [
    ['1', true],
    ['2', true],
    ['1', false],
    ['2', false],
  ] as const;
  for (let i = 0; i < 3; i++) for (const [pin, high] of forward) b.setGPIO(pin, high);
  t.is((await encoder.getPosition()).value, 12);
  for (const [pin, high] of [...forward].reverse()) b.setGPIO(pin, !high);
  t.is((await encoder.getPosition()).value, 8);
  await encoder.resetPosition();
  t.is((await encoder.getPosition('ticks')).value, 0);
});

test('simulated motor: power read back from the pins per wiring', (t) => {
  const state = (levels: Record<string, boolean>, duties: Record<string, number>) => ({
    level: (p: string) => levels[p] ?? false,
    duty: (p: string) => duties[p] ?? 0,
  });
  t.is(powerFromPins({ pwm: 'p', dir: 'd' }, state({ d: true }, { p: 0.4 })), 0.4);
  t.is(powerFromPins({ pwm: 'p', dir: 'd' }, state({}, { p: 0.4 })), -0.4);
  t.is(powerFromPins({ a: 'a', b: 'b', pwm: 'p' }, state({ b: true }, { p: 0.3 })), -0.3);
  t.is(powerFromPins({ a: 'a', b: 'b', pwm: 'p' }, state({ a: true, b: true }, { p: 0.3 })), 0);
  t.is(powerFromPins({ a: 'a', b: 'b' }, state({ a: true }, { b: 0.25 })), 0.75);
  t.is(powerFromPins({ a: 'a', b: 'b' }, state({ b: true }, { a: 0.25 })), -0.75);
  t.is(powerFromPins({ a: 'a', b: 'b' }, state({}, {})), 0);
});

test('simulated motor config: wiring rule and encoder pins need digital interrupts', (t) => {
  const bad = fakeBoardAttributes.safeParse({ simulated_motors: [{ name: 'm', pins: { pwm: '1' }, encoder_pins: { a: '9' } }] });
  t.false(bad.success);
  const messages = bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  t.true(messages.includes('simulated_motors.0.pins: must be one of the driver wirings pwm+dir, a+b or a+b+pwm; got pwm'));
  t.true(messages.includes('simulated_motors.0.encoder_pins.a: no digital interrupt is configured on pin 9'));
});

test('I2C devices in memory, reached through the typed I2C interface', async (t) => {
  const b = board({ i2c_devices: [{ bus: '1', address: 0x68, registers: [0x10, 0x20, 0x30] }] });
  const imu = i2cDevice(inProcess<I2C>(b as Required<Board>), '1', 0x68);
  t.deepEqual(await imu.read(0, 3), [0x10, 0x20, 0x30]);
  await imu.write(0x75, [0x71, 0x72]);
  t.is(await imu.readByte(0x76), 0x72);
  await imu.writeByte(0, 0xff);
  t.is(await imu.readByte(0), 0xff);
  t.deepEqual(b.capabilities!(), { kind: 'fake', i2cBuses: ['1'] });
  await t.throwsAsync(i2cDevice(inProcess<I2C>(b as Required<Board>), '1', 0x50).readByte(0), { message: 'i2c: no device at address 80 on bus "1"' });
  await t.throwsAsync(imu.read(0, 33), { message: 'i2c length 33: must be from 1 to 32 (SMBus block limit)' });
  await t.throwsAsync(imu.write(0, [256]), { message: 'i2c bytes: must be 1 to 32 values from 0 to 255' });
  await t.throwsAsync(i2cDevice(inProcess<I2C>(b as Required<Board>), '1', 0x80).readByte(0), { message: /i2c address 128: must be a 7-bit I2C address/ });
});
