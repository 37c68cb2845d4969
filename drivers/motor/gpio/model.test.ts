// Config validation of the gpio motor: defaults, ranges, wirings and the encoder rules, each error naming
// the field and the rule.
import test from 'ava';
import { validateAttributes } from '../../../plugins/contract.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gpioMotorModel } from './model.js';

const path = 'components[0].attributes';
const validate = (raw: unknown) => validateAttributes(gpioMotorModel, raw, path);
const base = { board: 'b1', pins: { pwm: '12', dir: '16' }, max_rpm: 100 };
const error = (raw: unknown) => {
  try {
    validate(raw);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a config error');
};

test('defaults: min 0, max 1, pwm_freq 800, dir_flip false; board and encoder are implicit dependencies', (t) => {
  const { attributes, implicitDependencies } = validate(base);
  t.like(attributes, { min_power_pct: 0, max_power_pct: 1, pwm_freq: 800, dir_flip: false });
  t.deepEqual(implicitDependencies, ['b1']);
  t.deepEqual(validate({ board: 'b1', pins: { a: '1', b: '2' }, encoder: 'e1', ticks_per_rotation: 100 }).implicitDependencies, ['b1', 'e1']);
});

test('the three wirings are accepted, with optional enable pins', (t) => {
  for (const pins of [
    { pwm: '1', dir: '2' },
    { a: '1', b: '2' },
    { a: '1', b: '2', pwm: '3' },
    { a: '1', b: '2', en_high: '4', en_low: '5' },
  ]) {
    t.notThrows(() => validate({ ...base, pins }));
  }
});

test('any other wiring is a config error naming the rule', (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ a: '1' }, 'a'],
    [{ b: '1' }, 'b'],
    [{ dir: '1' }, 'dir'],
    [{ pwm: '1' }, 'pwm'],
    [{}, 'no pins'],
    [{ a: '1', pwm: '2' }, 'a+pwm'],
    [{ a: '1', b: '2', dir: '3' }, 'a+b+dir'],
  ];
  for (const [pins, got] of cases) {
    t.is(error({ ...base, pins }), `${path}.pins ${JSON.stringify(pins)}: must be one of the driver wirings pwm+dir, a+b or a+b+pwm; got ${got}`);
  }
  t.is(error({ ...base, pins: { pwm: '1', dir: '1' } }), `${path}.pins.pwm "1": pin 1 is already used as dir`);
  t.regex(error({ ...base, pins: { pwm: '1', dir: '2', step: '3' } }), /pins: unknown field\(s\) step/);
});

test('ranges: max_power_pct 0.06..1, min_power_pct <= max_power_pct, pwm_freq a positive integer', (t) => {
  t.is(error({ ...base, max_power_pct: 0.05 }), `${path}.max_power_pct 0.05: must be at least 0.06`);
  t.is(error({ ...base, max_power_pct: 1.5 }), `${path}.max_power_pct 1.5: must be at most 1`);
  t.notThrows(() => validate({ ...base, max_power_pct: 0.06, min_power_pct: 0.06 }));
  t.is(error({ ...base, max_power_pct: 0.5, min_power_pct: 0.6 }), `${path}.min_power_pct 0.6: must be no greater than max_power_pct (0.5)`);
  t.is(error({ ...base, min_power_pct: -0.1 }), `${path}.min_power_pct -0.1: must be at least 0`);
  t.is(error({ ...base, pwm_freq: 0 }), `${path}.pwm_freq 0: must be at least 1`);
  t.is(error({ ...base, pwm_freq: 800.5 }), `${path}.pwm_freq 800.5: must be an integer`);
});

test('board is required; max_rpm without an encoder; ticks_per_rotation with one', (t) => {
  t.regex(error({ pins: base.pins, max_rpm: 100 }), /attributes\.board: is required/);
  t.regex(error({ board: 'b1', max_rpm: 100 }), /attributes\.pins: is required/);
  t.is(
    error({ board: 'b1', pins: base.pins }),
    `${path}.max_rpm: is required when the motor has no encoder: it is the speed (rpm) at full power, with which SetRPM and GoFor run the motor open loop at rpm / max_rpm power (e.g. "max_rpm": 200); or name an encoder to measure the speed instead`,
  );
  t.is(error({ board: 'b1', pins: base.pins, encoder: 'e1' }), `${path}.ticks_per_rotation: is required when the motor has an encoder`);
  t.notThrows(() => validate({ board: 'b1', pins: base.pins, encoder: 'e1', ticks_per_rotation: 360 }));
  t.is(error({ ...base, ticks_per_rotation: 0.5 }), `${path}.ticks_per_rotation 0.5: must be an integer`);
});

test('pin numbers are strings', (t) => {
  t.is(error({ ...base, pins: { pwm: 12, dir: '16' } }), `${path}.pins.pwm 12: must be a string holding a board pin number, e.g. "12"`);
});

test("drivers/README.md's first example shows max_rpm on the motor without an encoder, and the example is a valid config", (t) => {
  const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
  const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)![1]) as {
    components: { name: string; model: string; attributes: Record<string, unknown> }[];
  };
  const motors = example.components.filter((c) => c.model === 'gpio');
  const firstMotor = motors[0];
  t.is(firstMotor.attributes.encoder, undefined, 'the first motor of the example is the one without an encoder');
  t.is(typeof firstMotor.attributes.max_rpm, 'number');
  for (const motor of motors) t.notThrows(() => validate(motor.attributes), motor.name);
  t.regex(readme.slice(0, readme.indexOf('```json')), /needs \*\*`max_rpm`\*\*, its speed at full power/);
});
