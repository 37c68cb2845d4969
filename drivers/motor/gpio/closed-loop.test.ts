// The gpio motor with each encoder model against the fake board's simulated motor, all in this thread
// (the same drivers the runtime hosts in workers, wired through promise proxies).
import test from 'ava';
import type { Board } from '../../../plugins/apis/board.js';
import type { Encoder } from '../../../plugins/apis/encoder.js';
import { createFakeBoard } from '../../board/fake/driver.js';
import { fakeBoardAttributes } from '../../board/fake/model.js';
import { createFakeEncoder } from '../../encoder/fake/driver.js';
import { createIncrementalEncoder } from '../../encoder/incremental/driver.js';
import { createSingleEncoder } from '../../encoder/single/driver.js';
import { inProcess, memoryLogger } from '../testing/in-process.js';
import { runClosedLoop } from './control.js';
import { createGpioMotor } from './driver.js';
import { gpioMotorAttributes } from './model.js';

const TOLERANCE = 0.05; // revolutions

function setup(encoderPins: { a: string; b?: string }, pins: Record<string, string>) {
  const board = createFakeBoard(
    fakeBoardAttributes.parse({
      digital_interrupts: [
        { name: 'ea', pin: '40' },
        { name: 'eb', pin: '41' },
      ],
      simulated_motors: [{ name: 'sim', pins, max_rpm: 120, ticks_per_rotation: 200, encoder_pins: encoderPins }],
    }),
  );
  return { board, remote: inProcess<Board>(board) };
}

const simRevolutions = async (board: Board) => ((await board.doCommand!({ simulated_motor: 'sim' })) as { revolutions: number }).revolutions;

test('incremental encoder: GoFor and GoTo reach the target; position is ticks / ticks_per_rotation', async (t) => {
  const { board, remote } = setup({ a: '40', b: '41' }, { pwm: '12', dir: '16' });
  const logger = memoryLogger();
  const encoder = await createIncrementalEncoder({ board: 'b', pins: { a: 'ea', b: 'eb' } }, remote, logger);
  const motor = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { pwm: '12', dir: '16' }, encoder: 'e', ticks_per_rotation: 200 }),
    board: remote,
    encoder: inProcess<Encoder>(encoder),
    logger,
  });
  t.teardown(() => {
    encoder.close();
    board.close();
  });
  t.true((await motor.getProperties()).positionReporting);
  await motor.goFor(60, 2);
  t.false((await motor.isPowered()).isOn);
  t.true(Math.abs((await motor.getPosition()) - 2) <= TOLERANCE, `position ${await motor.getPosition()}`);
  t.true(Math.abs((await simRevolutions(board)) - 2) <= TOLERANCE);
  await motor.goTo(90, 0.5);
  t.true(Math.abs((await motor.getPosition()) - 0.5) <= TOLERANCE, `position ${await motor.getPosition()}`);
  await motor.goFor(-60, -1); // backward twice is forward
  t.true(Math.abs((await motor.getPosition()) - 1.5) <= TOLERANCE, `position ${await motor.getPosition()}`);
  await motor.resetZeroPosition(10);
  t.true(Math.abs((await motor.getPosition()) - 10) <= TOLERANCE);
  await motor.goTo(60, 9);
  t.true(Math.abs((await motor.getPosition()) - 9) <= TOLERANCE, `position ${await motor.getPosition()}`);
  t.true(Math.abs((await simRevolutions(board)) - 0.5) <= 2 * TOLERANCE);
});

test('single encoder takes its direction from the motor', async (t) => {
  const { board, remote } = setup({ a: '40' }, { a: '20', b: '21' });
  const logger = memoryLogger();
  const encoder = await createSingleEncoder({ board: 'b', pins: { i: 'ea' } }, remote, logger);
  const motor = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { a: '20', b: '21' }, encoder: 'e', ticks_per_rotation: 200 }),
    board: remote,
    encoder: inProcess<Encoder>(encoder),
    logger,
  });
  t.teardown(() => {
    encoder.close();
    board.close();
  });
  await motor.goFor(60, 1);
  t.true(Math.abs((await motor.getPosition()) - 1) <= TOLERANCE, `position ${await motor.getPosition()}`);
  await motor.goTo(60, 0.25);
  t.true(Math.abs((await motor.getPosition()) - 0.25) <= TOLERANCE, `position ${await motor.getPosition()}`);
  t.true(Math.abs((await simRevolutions(board)) - 0.25) <= TOLERANCE);
});

test('fake encoder follows the motor power; SetRPM holds a speed until Stop', async (t) => {
  const board = createFakeBoard(fakeBoardAttributes.parse({}));
  const encoder = createFakeEncoder({ ticks_per_rotation: 100, max_rpm: 100, speed_rpm: 0 });
  const motor = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { a: '1', b: '2', pwm: '3' }, encoder: 'e', ticks_per_rotation: 100 }),
    board: inProcess<Board>(board),
    encoder: inProcess<Encoder>(encoder),
    logger: memoryLogger(),
  });
  await motor.goFor(50, 1);
  t.true(Math.abs((await motor.getPosition()) - 1) <= TOLERANCE, `position ${await motor.getPosition()}`);
  await motor.setRPM(30);
  const start = await motor.getPosition();
  while ((await motor.getPosition()) < start + 0.3) await new Promise((r) => setTimeout(r, 20));
  t.true((await motor.isMoving()) && (await motor.isPowered()).powerPct > 0);
  t.like(await motor.doCommand!({ status: {} }), { pwm_freq: 800, has_encoder: true });
  await motor.stop();
  t.false(await motor.isMoving());
  t.false(await board.getGPIO('1'));
  t.is(await board.pwm('3'), 0);
});

test('without an encoder: GoFor runs open loop, GoTo and ResetZeroPosition are unsupported, position 0', async (t) => {
  const board = createFakeBoard(fakeBoardAttributes.parse({}));
  const motor = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { pwm: '1', dir: '2' }, max_rpm: 100, max_power_pct: 0.5 }),
    board: inProcess<Board>(board),
    logger: memoryLogger(),
  });
  t.false((await motor.getProperties()).positionReporting);
  // While it runs: rpm / max_rpm power (0.4), backward for negative revolutions, capped by max_power_pct.
  const running = motor.goFor(40, -50);
  while (!(await motor.isMoving())) await new Promise((r) => setTimeout(r, 5));
  t.deepEqual(await motor.isPowered(), { isOn: true, powerPct: -0.4 });
  t.false(await board.getGPIO('2'));
  t.is(await board.pwm('1'), 0.4);
  await motor.stop();
  await running;
  const capped = motor.goFor(100, 50);
  while (!(await motor.isMoving())) await new Promise((r) => setTimeout(r, 5));
  t.deepEqual(await motor.isPowered(), { isOn: true, powerPct: 0.5 });
  await motor.stop();
  await capped;
  await motor.goFor(50, 0.1); // runs to its end: 0.1 / 50 minutes
  t.false(await motor.isMoving());
  t.is(await motor.getPosition(), 0);
  t.is(((await t.throwsAsync(async () => motor.goTo(10, 1))) as { code?: string }).code, 'UNIMPLEMENTED');
  t.is(((await t.throwsAsync(async () => motor.resetZeroPosition(0))) as { code?: string }).code, 'UNIMPLEMENTED');
  const nearZero = await t.throwsAsync(async () => motor.goFor(0.05, 1));
  t.regex(nearZero!.message, /rpm 0.05: must not be near 0/);
  const zeroRevs = await t.throwsAsync(async () => motor.goFor(10, 0));
  t.regex(zeroRevs!.message, /revolutions 0: must not be 0/);
  // A Stop ends a running GoFor at once.
  const long = motor.goFor(1, 100);
  await motor.stop();
  await long;
  t.false((await motor.isPowered()).isOn);
});

test('a closed loop that sees no encoder movement at full power, or movement the wrong way, stops with an error', async (t) => {
  // Stall: the encoder's interrupts are driven by nothing.
  const { board, remote } = setup({ a: '40', b: '41' }, { pwm: '50', dir: '51' });
  const logger = memoryLogger();
  const encoder = await createIncrementalEncoder({ board: 'b', pins: { a: 'ea', b: 'eb' } }, remote, logger);
  t.teardown(() => {
    encoder.close();
    board.close();
  });
  const stalled = await createGpioMotor({
    name: 'm',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { pwm: '12', dir: '16' }, encoder: 'e', ticks_per_rotation: 200, max_power_pct: 0.5 }),
    board: remote,
    encoder: inProcess<Encoder>(encoder),
    logger,
  });
  const stall = await t.throwsAsync(async () => stalled.goFor(60, 1));
  t.is((stall as { code?: string }).code, 'FAILED_PRECONDITION');
  t.regex(stall!.message, /the encoder did not move for 3 s at full power/);
  t.false(await stalled.isMoving());
  t.is(await board.pwm('12'), 0);

  // Wrong way: dir_flip set although the wiring already turns the shaft forward.
  const flipped = await createGpioMotor({
    name: 'm2',
    attributes: gpioMotorAttributes.parse({ board: 'b', pins: { pwm: '50', dir: '51' }, dir_flip: true, encoder: 'e', ticks_per_rotation: 200 }),
    board: remote,
    encoder: inProcess<Encoder>(encoder),
    logger,
  });
  const wrongWay = await t.throwsAsync(async () => flipped.goFor(60, 2));
  t.regex(wrongWay!.message, /the encoder counts against the motor direction; check dir_flip/);
  t.false(await flipped.isMoving());
});

test('the last small step of the power ramp onto full power is sent, so a stall is seen', async (t) => {
  // Loop periods of 8.145 ms ramp the power from 0.011 in steps of 0.01629 to 0.4997, where the last step
  // to the 0.5 cap (0.0003) is smaller than other changes that are sent. Left unsent, it hung a goFor under load.
  let now = 0;
  const powers: number[] = [];
  const run = runClosedLoop(
    {
      position: async () => 0, // the encoder never moves
      setPower: async (p) => void powers.push(p),
      now: () => now,
      sleep: async () => void (now += 8.145),
      cancelled: () => now > 20_000, // ends a loop that misses the stall, so the test fails instead of hanging
    },
    { rpm: 60, ticksPerRotation: 200, targetTicks: 200, minPower: 0, maxPower: 0.5 },
  );
  const err = await t.throwsAsync(run);
  t.regex(err!.message, /the encoder did not move for 3 s at full power/);
  t.is(powers.at(-2)!.toFixed(4), '0.4997'); // the ramp did end just below the cap
  t.is(powers.at(-1), 0.5);
});
