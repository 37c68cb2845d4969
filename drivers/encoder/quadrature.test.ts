import test from 'ava';
import { createFakeEncoder } from './fake/driver.js';
import { QuadratureDecoder } from './quadrature.js';

test('quadrature: four counts per cycle, sign from which channel leads, double changes skipped', (t) => {
  const d = new QuadratureDecoder();
  d.init(false, false);
  // Forward: a leads.
  for (const [ch, high] of [
    ['a', true],
    ['b', true],
    ['a', false],
    ['b', false],
  ] as const)
    d.edge(ch, high);
  t.is(d.count, 4);
  // Backward: b leads.
  for (const [ch, high] of [
    ['b', true],
    ['a', true],
    ['b', false],
  ] as const)
    d.edge(ch, high);
  t.is(d.count, 1);
  // A repeated level is no change.
  d.edge('b', false);
  t.is(d.count, 1);
  t.is(d.skipped, 0);
});

test('fake encoder integrates its speed, follows motor power, and refuses degrees', (t) => {
  let now = 0;
  const e = createFakeEncoder({ ticks_per_rotation: 100, max_rpm: 60, speed_rpm: 0 }, () => now);
  e.motorPowerChanged!(0.5); // 30 rpm = 50 ticks/s
  now = 2000;
  t.deepEqual(e.getPosition(), { value: 100, type: 'ticks' });
  e.doCommand!({ set_speed: -60 });
  now = 2500;
  t.is((e.getPosition() as { value: number }).value, 50);
  e.resetPosition();
  t.is((e.getPosition() as { value: number }).value, 0);
  t.throws(() => e.getPosition('degrees'), { message: /position_type ANGLE_DEGREES: not supported/ });
  t.deepEqual(e.getProperties(), { ticksCountSupported: true, angleDegreesSupported: false });
});
