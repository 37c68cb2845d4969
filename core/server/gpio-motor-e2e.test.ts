// The gpio motor, its encoders and boards end to end: one real platform-server with every wiring x
// dir_flip, encoder motors on the fake board's simulated motors, an esp32 board, and every invalid config,
// observed through the real gRPC clients (MotorService, EncoderService, BoardService, RobotService).
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { EncoderServiceClient, PositionType } from '../../gen/platform/component/encoder/v1/encoder.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime, type SpawnedRuntime } from './testing/spawn-runtime.js';

const MOTOR = 'core:component:motor';
const TOLERANCE = 0.05; // revolutions
type Pins = { a?: string; b?: string; dir?: string; pwm?: string };

const motor = (name: string, attributes: Record<string, unknown>, board = 'board1') => ({
  name,
  api: MOTOR,
  model: 'gpio',
  attributes: { board, ...attributes },
});

// Every wiring x dir_flip, each on its own pins, with limits so that "below min" and "above max" differ.
const WIRINGS: Record<string, Pins> = { 'pwm+dir': { pwm: '1', dir: '2' }, 'a+b': { a: '3', b: '4' }, 'a+b+pwm': { a: '5', b: '6', pwm: '7' } };
const wiringMotors = Object.entries(WIRINGS).flatMap(([wiring, pins], w) =>
  [false, true].map((flip) => {
    const offset = flip ? 10 : 0;
    const shifted = Object.fromEntries(Object.entries(pins).map(([k, v]) => [k, String(Number(v) + offset)])) as Pins;
    return { name: `w${w}${flip ? 'f' : ''}`, wiring, flip, pins: shifted, pwmFreq: 500 + w * 100 + offset };
  }),
);

const invalid: Array<[string, Record<string, unknown>, string]> = [
  ['bad-a', { pins: { a: '60' }, max_rpm: 10 }, 'pins {"a":"60"}: must be one of the driver wirings pwm+dir, a+b or a+b+pwm; got a'],
  ['bad-b', { pins: { b: '60' }, max_rpm: 10 }, 'pins {"b":"60"}: must be one of the driver wirings pwm+dir, a+b or a+b+pwm; got b'],
  ['bad-dir', { pins: { dir: '61' }, max_rpm: 10 }, 'got dir'],
  ['bad-pwm', { pins: { pwm: '62' }, max_rpm: 10 }, 'got pwm'],
  ['bad-nopins', { pins: {}, max_rpm: 10 }, 'pins {}: must be one of the driver wirings pwm+dir, a+b or a+b+pwm; got no pins'],
  ['bad-max-high', { pins: { pwm: '63', dir: '64' }, max_rpm: 10, max_power_pct: 1.5 }, 'max_power_pct 1.5: must be at most 1'],
  ['bad-max-low', { pins: { pwm: '63', dir: '64' }, max_rpm: 10, max_power_pct: 0.05 }, 'max_power_pct 0.05: must be at least 0.06'],
  [
    'bad-min',
    { pins: { pwm: '63', dir: '64' }, max_rpm: 10, min_power_pct: 0.7, max_power_pct: 0.5 },
    'min_power_pct 0.7: must be no greater than max_power_pct (0.5)',
  ],
  ['bad-no-rpm', { pins: { pwm: '63', dir: '64' } }, 'max_rpm: is required when the motor has no encoder: it is the speed (rpm) at full power'],
  ['bad-no-tpr', { pins: { pwm: '63', dir: '64' }, encoder: 'enc-f' }, 'ticks_per_rotation: is required when the motor has an encoder'],
  ['bad-board', { pins: { pwm: '63', dir: '64' }, max_rpm: 10, board: 'nope' }, 'depends on "nope", which is not configured'],
  [
    'bad-not-board',
    { pins: { pwm: '63', dir: '64' }, max_rpm: 10, board: 'thermo' },
    'attributes.board: must name a core:component:board; "thermo" is a core:component:sensor',
  ],
];

const components = [
  {
    name: 'board1',
    api: 'core:component:board',
    model: 'fake',
    attributes: {
      digital_interrupts: [
        { name: 'qa', pin: '40' },
        { name: 'qb', pin: '41' },
        { name: 'si', pin: '42' },
      ],
      simulated_motors: [
        { name: 'quad', pins: { pwm: '30', dir: '31' }, max_rpm: 120, ticks_per_rotation: 200, encoder_pins: { a: '40', b: '41' } },
        { name: 'single', pins: { a: '32', b: '33' }, max_rpm: 120, ticks_per_rotation: 100, encoder_pins: { a: '42' } },
      ],
    },
  },
  { name: 'esp1', api: 'core:component:board', model: 'esp32', attributes: {} },
  { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: {} },
  ...wiringMotors.map((m) => motor(m.name, { pins: m.pins, dir_flip: m.flip, min_power_pct: 0.2, max_power_pct: 0.8, pwm_freq: m.pwmFreq, max_rpm: 100 })),
  { name: 'enc-q', api: 'core:component:encoder', model: 'incremental', attributes: { board: 'board1', pins: { a: 'qa', b: 'qb' } } },
  { name: 'enc-s', api: 'core:component:encoder', model: 'single', attributes: { board: 'board1', pins: { i: 'si' } } },
  { name: 'enc-f', api: 'core:component:encoder', model: 'fake', attributes: { ticks_per_rotation: 100, max_rpm: 100 } },
  motor('mq', { pins: { pwm: '30', dir: '31' }, encoder: 'enc-q', ticks_per_rotation: 200 }),
  motor('ms', { pins: { a: '32', b: '33' }, encoder: 'enc-s', ticks_per_rotation: 100 }),
  motor('mf', { pins: { pwm: '34', dir: '35' }, encoder: 'enc-f', ticks_per_rotation: 100 }),
  motor('en', { pins: { pwm: '70', dir: '71', en_high: '72', en_low: '73' }, max_rpm: 100 }),
  motor('open', { pins: { pwm: '36', dir: '37' }, max_rpm: 100, max_power_pct: 0.5 }),
  motor('e1', { pins: { pwm: '2', dir: '3' }, max_rpm: 100 }, 'esp1'),
  motor('e2', { pins: { a: '4', b: '5' }, max_rpm: 100, pwm_freq: 1234 }, 'esp1'),
  ...invalid.map(([name, attrs]) => motor(name, attrs)),
];

let runtime: SpawnedRuntime;
let motors: MotorServiceClient;
let boards: BoardServiceClient;
let encoders: EncoderServiceClient;
let robot: RobotServiceClient;

test.before(async () => {
  runtime = await spawnRuntime({ components });
  motors = new MotorServiceClient(runtime.address, insecure());
  boards = new BoardServiceClient(runtime.address, insecure());
  encoders = new EncoderServiceClient(runtime.address, insecure());
  robot = new RobotServiceClient(runtime.address, insecure());
  const valid = components.filter((c) => !c.name.startsWith('bad-')).map((c) => c.name);
  await eventually(
    () => call(robot, 'getMachineStatus', {}),
    (s) =>
      valid.every((name) =>
        s.resources.some((r: { name: { name: string }; state: ResourceState }) => r.name.name === name && r.state === ResourceState.RESOURCE_STATE_READY),
      ),
    120_000,
  );
});
test.after.always(() => runtime?.stop());

const level = async (board: string, pin: string) => (await call(boards, 'getGpio', { name: board, pin })).high as boolean;
const duty = async (board: string, pin: string) => (await call(boards, 'pwm', { name: board, pin })).dutyPct as number;
const frequency = async (board: string, pin: string) => (await call(boards, 'pwmFrequency', { name: board, pin })).frequencyHz as number;
const position = async (name: string) => (await call(motors, 'getPosition', { name })).position as number;
const close = (actual: number, expected: number) => Math.abs(actual - expected) < 1e-9;

/** FACTS.md "SetPower(p)", written out independently of the driver's mapping. */
function expectedPins(wiring: string, flip: boolean, p: number, pins: Pins) {
  const applied = Math.abs(p) <= 0.01 ? 0 : Math.sign(p) * Math.max(Math.min(Math.abs(p), 0.8), 0.2);
  const levels: Record<string, boolean> = {};
  const duties: Record<string, number> = {};
  for (const pin of Object.values(pins)) levels[pin] = false;
  if (pins.pwm) duties[pins.pwm] = 0;
  if (wiring === 'a+b') duties[pins.a!] = duties[pins.b!] = 0;
  if (applied !== 0) {
    const forward = applied > 0 !== flip;
    const magnitude = Math.abs(applied);
    if (wiring === 'pwm+dir') {
      levels[pins.dir!] = forward;
      duties[pins.pwm!] = magnitude;
    } else if (wiring === 'a+b+pwm') {
      levels[pins.a!] = forward;
      levels[pins.b!] = !forward;
      duties[pins.pwm!] = magnitude;
    } else {
      const [high, low] = forward ? [pins.a!, pins.b!] : [pins.b!, pins.a!];
      levels[high] = true;
      duties[low] = 1 - magnitude;
    }
  }
  delete levels[pins.pwm ?? ''];
  return { applied, levels, duties };
}

test.serial('every wiring x dir_flip x power drives the pins, duty and frequency of FACTS.md', async (t) => {
  const powers = [0, 0.01, -0.01, 0.1, -0.1, 0.5, -0.5, 0.9, -1];
  for (const m of wiringMotors) {
    for (const p of powers) {
      await call(motors, 'setPower', { name: m.name, powerPct: p });
      const want = expectedPins(m.wiring, m.flip, p, m.pins);
      const label = `${m.name} (${m.wiring}, dir_flip ${m.flip}) power ${p}`;
      for (const [pin, high] of Object.entries(want.levels)) t.is(await level('board1', pin), high, `${label}: pin ${pin} level`);
      for (const [pin, d] of Object.entries(want.duties))
        t.true(close(await duty('board1', pin), d), `${label}: pin ${pin} duty ${await duty('board1', pin)}, want ${d}`);
      const pwmPins = m.wiring === 'a+b' ? [m.pins.a!, m.pins.b!] : [m.pins.pwm!];
      for (const pin of pwmPins) t.is(await frequency('board1', pin), m.pwmFreq, `${label}: pin ${pin} frequency`);
      const powered = await call(motors, 'isPowered', { name: m.name });
      t.is(powered.isOn, want.applied !== 0, `${label}: is_on`);
      t.true(close(powered.powerPct, want.applied), `${label}: power_pct ${powered.powerPct}, want ${want.applied}`);
      t.is((await call(motors, 'isMoving', { name: m.name })).isMoving, want.applied !== 0);
    }
    // Stop drives the pins low from any state.
    await call(motors, 'setPower', { name: m.name, powerPct: -0.6 });
    await call(motors, 'stop', { name: m.name });
    const stopped = expectedPins(m.wiring, m.flip, 0, m.pins);
    for (const [pin, high] of Object.entries(stopped.levels)) t.is(await level('board1', pin), high, `${m.name} stop: pin ${pin}`);
    for (const [pin, d] of Object.entries(stopped.duties)) t.is(await duty('board1', pin), d, `${m.name} stop: pin ${pin} duty`);
  }
});

test.serial('enable pins: en_high high and en_low low while powered, the reverse when stopped', async (t) => {
  t.false(await level('board1', '72'));
  t.true(await level('board1', '73'));
  await call(motors, 'setPower', { name: 'en', powerPct: -0.3 });
  t.deepEqual([await level('board1', '71'), await level('board1', '72'), await level('board1', '73'), await duty('board1', '70')], [false, true, false, 0.3]);
  await call(motors, 'stop', { name: 'en' });
  t.deepEqual([await level('board1', '71'), await level('board1', '72'), await level('board1', '73'), await duty('board1', '70')], [false, false, true, 0]);
});

test.serial('with an incremental encoder, GoFor and GoTo reach their targets on the simulated board', async (t) => {
  t.true((await call(motors, 'getProperties', { name: 'mq' })).positionReporting);
  await call(motors, 'goFor', { name: 'mq', rpm: 60, revolutions: 2 });
  t.true(Math.abs((await position('mq')) - 2) <= TOLERANCE, `GoFor: ${await position('mq')}`);
  const ticks = await call(encoders, 'getPosition', { name: 'enc-q', positionType: PositionType.POSITION_TYPE_TICKS_COUNT });
  t.true(Math.abs(ticks.value - 400) <= TOLERANCE * 200, `encoder ${ticks.value}`);
  const sim = (await call(boards, 'doCommand', { name: 'board1', command: { simulated_motor: 'quad' } })).result;
  t.true(Math.abs(sim.revolutions - 2) <= TOLERANCE, `simulated shaft ${sim.revolutions}`);
  await call(motors, 'goTo', { name: 'mq', rpm: 90, positionRevolutions: 0.5 });
  t.true(Math.abs((await position('mq')) - 0.5) <= TOLERANCE, `GoTo: ${await position('mq')}`);
  t.false((await call(motors, 'isPowered', { name: 'mq' })).isOn);
  await call(motors, 'resetZeroPosition', { name: 'mq', offset: 0 });
  t.true(Math.abs(await position('mq')) <= 1 / 200);
  await call(motors, 'goFor', { name: 'mq', rpm: -60, revolutions: 1 });
  t.true(Math.abs((await position('mq')) + 1) <= TOLERANCE, `GoFor backward: ${await position('mq')}`);
  await call(encoders, 'resetPosition', { name: 'enc-q' });
  t.is((await call(encoders, 'getPosition', { name: 'enc-q', positionType: PositionType.POSITION_TYPE_UNSPECIFIED })).value, 0);
  t.deepEqual(await call(encoders, 'getProperties', { name: 'enc-q' }), { ticksCountSupported: true, angleDegreesSupported: false });
  const degrees = await t.throwsAsync(call(encoders, 'getPosition', { name: 'enc-q', positionType: PositionType.POSITION_TYPE_ANGLE_DEGREES }));
  t.is((degrees as { code?: number }).code, status.INVALID_ARGUMENT);
});

test.serial('a single encoder counts in the motor direction; a fake encoder follows its motor', async (t) => {
  await call(motors, 'goFor', { name: 'ms', rpm: 60, revolutions: 1 });
  await call(motors, 'goTo', { name: 'ms', rpm: 60, positionRevolutions: 0.25 });
  t.true(Math.abs((await position('ms')) - 0.25) <= TOLERANCE, `single GoTo: ${await position('ms')}`);
  const sim = (await call(boards, 'doCommand', { name: 'board1', command: { simulated_motor: 'single' } })).result;
  t.true(Math.abs(sim.revolutions - 0.25) <= TOLERANCE, `simulated shaft ${sim.revolutions}`);
  await call(motors, 'goTo', { name: 'mf', rpm: 50, positionRevolutions: -1 });
  t.true(Math.abs((await position('mf')) + 1) <= TOLERANCE, `fake GoTo: ${await position('mf')}`);
});

test.serial('without an encoder: GoFor runs and stops; the FACTS error cases', async (t) => {
  t.false((await call(motors, 'getProperties', { name: 'open' })).positionReporting);
  await call(motors, 'goFor', { name: 'open', rpm: 100, revolutions: 0.2 });
  t.false((await call(motors, 'isPowered', { name: 'open' })).isOn);
  t.is(await position('open'), 0);
  const nearZero = await t.throwsAsync(call(motors, 'goFor', { name: 'open', rpm: 0.01, revolutions: 1 }));
  t.is((nearZero as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(nearZero!.message, /rpm 0.01: must not be near 0/);
  const zero = await t.throwsAsync(call(motors, 'goFor', { name: 'open', rpm: 10, revolutions: 0 }));
  t.regex(zero!.message, /revolutions 0: must not be 0/);
  const goTo = await t.throwsAsync(call(motors, 'goTo', { name: 'open', rpm: 10, positionRevolutions: 1 }));
  t.is((goTo as { code?: number }).code, status.UNIMPLEMENTED);
  t.regex(goTo!.message, /GoTo needs an encoder/);
  const reset = await t.throwsAsync(call(motors, 'resetZeroPosition', { name: 'open', offset: 0 }));
  t.is((reset as { code?: number }).code, status.UNIMPLEMENTED);
  // SetRPM without an encoder is rpm / max_rpm power, clamped to max_power_pct.
  await call(motors, 'setRpm', { name: 'open', rpm: 40 });
  t.true(close((await call(motors, 'isPowered', { name: 'open' })).powerPct, 0.4));
  await call(motors, 'setRpm', { name: 'open', rpm: -100 });
  t.true(close((await call(motors, 'isPowered', { name: 'open' })).powerPct, -0.5));
  await call(motors, 'stop', { name: 'open' });
});

test.serial('esp32: a pwm_freq that the board replaces is warned about once; the default is not', async (t) => {
  const warnings = runtime.logs().filter((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.includes('instead of pwm_freq'));
  t.deepEqual(
    warnings.map((l) => [l.logger, l.msg]),
    [['platform.components.motor.e2', 'board esp1 is a esp32: PWM at 10000 Hz instead of pwm_freq 1234']],
  );
});

test.serial('esp32: motors run their PWM at 10000 Hz; at most 4 distinct frequencies, shared by pin', async (t) => {
  t.is(await frequency('esp1', '2'), 10_000);
  t.is(await frequency('esp1', '4'), 10_000);
  t.is(await frequency('esp1', '5'), 10_000);
  await call(motors, 'setPower', { name: 'e1', powerPct: 0.5 });
  t.is(await duty('esp1', '2'), 0.5);
  t.is(await frequency('esp1', '2'), 10_000);
  for (const [pin, hz] of [
    ['20', 100],
    ['21', 200],
    ['22', 300],
    ['23', 200],
  ] as const) {
    await call(boards, 'setPwmFrequency', { name: 'esp1', pin, frequencyHz: hz });
  }
  const fifth = await t.throwsAsync(call(boards, 'setPwmFrequency', { name: 'esp1', pin: '24', frequencyHz: 400 }));
  t.is((fifth as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(fifth!.message, /frequency_hz 400 on pin 24: needs a fifth PWM timer; the esp32 has 4, all in use at 100, 200, 300, 10000 Hz/);
  const timers = (await call(boards, 'doCommand', { name: 'esp1', command: { pwm_timers: {} } })).result.timers;
  t.deepEqual(
    timers.map((x: { frequency_hz: number }) => x.frequency_hz),
    [100, 200, 300, 10_000],
  );
  t.deepEqual(timers.find((x: { frequency_hz: number }) => x.frequency_hz === 200).pins, ['21', '23']);
  await call(motors, 'stop', { name: 'e1' });
});

test.serial('each invalid config is rejected with its message and reported through GetMachineStatus', async (t) => {
  const machine = await eventually(
    () => call(robot, 'getMachineStatus', {}),
    (s) => invalid.every(([name]) => s.resources.some((r: { name: { name: string }; error: string }) => r.name.name === name && r.error)),
    60_000,
  );
  for (const [name, , message] of invalid) {
    const resource = machine.resources.find((r: { name: { name: string } }) => r.name.name === name);
    t.is(resource.state, ResourceState.RESOURCE_STATE_UNHEALTHY, name);
    t.true(resource.error.includes(message), `${name}: ${resource.error}`);
    const index = components.findIndex((c) => c.name === name);
    if (name !== 'bad-board') t.true(resource.error.startsWith(`components[${index}].attributes.`), `${name}: ${resource.error}`);
  }
  const call404 = await t.throwsAsync(call(motors, 'setPower', { name: 'bad-a', powerPct: 0.5 }));
  t.is((call404 as { code?: number }).code, status.UNAVAILABLE);
});
