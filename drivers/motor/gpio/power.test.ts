// The power -> pins mapping of FACTS.md "gpio motor", for every wiring, dir_flip and the edge powers.
import test from 'ava';
import { effectivePower, planPins, type MotorPins } from './power.js';

const limits = { min_power_pct: 0.2, max_power_pct: 0.8 };

test('effective power: |p| <= 0.01 stops, clamps to +-max, raises a nonzero |p| below min to min', (t) => {
  t.is(effectivePower(0, limits), 0);
  t.is(effectivePower(0.01, limits), 0);
  t.is(effectivePower(-0.01, limits), 0);
  t.is(effectivePower(0.0101, limits), 0.2);
  t.is(effectivePower(0.1, limits), 0.2);
  t.is(effectivePower(-0.1, limits), -0.2);
  t.is(effectivePower(0.5, limits), 0.5);
  t.is(effectivePower(-0.5, limits), -0.5);
  t.is(effectivePower(0.9, limits), 0.8);
  t.is(effectivePower(-3, limits), -0.8);
  t.is(effectivePower(Number.NaN, limits), 0);
  t.is(effectivePower(0.05, { min_power_pct: 0, max_power_pct: 1 }), 0.05);
});

const pd: MotorPins = { pwm: '1', dir: '2' };
const ab: MotorPins = { a: '3', b: '4' };
const abp: MotorPins = { a: '5', b: '6', pwm: '7' };

test('pwm+dir: dir high forward (inverted by dir_flip), duty |p| on pwm', (t) => {
  t.deepEqual(planPins(pd, false, 0.5), { levels: [['2', true]], pwmOff: [], pwm: { pin: '1', duty: 0.5 } });
  t.deepEqual(planPins(pd, false, -0.5), { levels: [['2', false]], pwmOff: [], pwm: { pin: '1', duty: 0.5 } });
  t.deepEqual(planPins(pd, true, 0.5), { levels: [['2', false]], pwmOff: [], pwm: { pin: '1', duty: 0.5 } });
  t.deepEqual(planPins(pd, true, -0.5), { levels: [['2', true]], pwmOff: [], pwm: { pin: '1', duty: 0.5 } });
});

test('a+b+pwm: a high forward, b high reverse, swapped by dir_flip; duty |p|', (t) => {
  t.deepEqual(planPins(abp, false, 0.3), {
    levels: [
      ['5', true],
      ['6', false],
    ],
    pwmOff: [],
    pwm: { pin: '7', duty: 0.3 },
  });
  t.deepEqual(planPins(abp, false, -0.3), {
    levels: [
      ['5', false],
      ['6', true],
    ],
    pwmOff: [],
    pwm: { pin: '7', duty: 0.3 },
  });
  t.deepEqual(planPins(abp, true, 0.3), {
    levels: [
      ['5', false],
      ['6', true],
    ],
    pwmOff: [],
    pwm: { pin: '7', duty: 0.3 },
  });
  t.deepEqual(planPins(abp, true, -0.3), {
    levels: [
      ['5', true],
      ['6', false],
    ],
    pwmOff: [],
    pwm: { pin: '7', duty: 0.3 },
  });
});

test('a+b: one pin high, the other carries PWM at 1-|p|', (t) => {
  t.deepEqual(planPins(ab, false, 0.3), {
    levels: [
      ['3', true],
      ['4', false],
    ],
    pwmOff: ['3'],
    pwm: { pin: '4', duty: 0.7 },
  });
  t.deepEqual(planPins(ab, false, -0.3), {
    levels: [
      ['4', true],
      ['3', false],
    ],
    pwmOff: ['4'],
    pwm: { pin: '3', duty: 0.7 },
  });
  t.deepEqual(planPins(ab, true, 0.3), {
    levels: [
      ['4', true],
      ['3', false],
    ],
    pwmOff: ['4'],
    pwm: { pin: '3', duty: 0.7 },
  });
  t.deepEqual(planPins(ab, true, -0.3), {
    levels: [
      ['3', true],
      ['4', false],
    ],
    pwmOff: ['3'],
    pwm: { pin: '4', duty: 0.7 },
  });
  t.deepEqual(planPins(ab, false, 1), {
    levels: [
      ['3', true],
      ['4', false],
    ],
    pwmOff: ['3'],
    pwm: { pin: '4', duty: 0 },
  });
});

test('stop drives every driver pin low and every PWM pin to duty 0', (t) => {
  t.deepEqual(planPins(pd, false, 0), { levels: [['2', false]], pwmOff: ['1'] });
  t.deepEqual(planPins(ab, true, 0), {
    levels: [
      ['3', false],
      ['4', false],
    ],
    pwmOff: ['3', '4'],
  });
  t.deepEqual(planPins(abp, false, 0), {
    levels: [
      ['5', false],
      ['6', false],
    ],
    pwmOff: ['7'],
  });
});

test('enable pins: en_high high and en_low low while powered, the reverse when stopped', (t) => {
  const pins = { ...pd, en_high: '8', en_low: '9' };
  t.deepEqual(planPins(pins, false, 0.5).levels, [
    ['2', true],
    ['8', true],
    ['9', false],
  ]);
  t.deepEqual(planPins(pins, false, 0).levels, [
    ['2', false],
    ['8', false],
    ['9', true],
  ]);
});
