import test from 'ava';
import { envNumber, envWholeNumber } from './env.js';

test('envWholeNumber: unset or empty gives the default; a whole number >= 1 is taken', (t) => {
  t.is(envWholeNumber('PLATFORM_X', 32, {}), 32);
  t.is(envWholeNumber('PLATFORM_X', 32, { PLATFORM_X: '' }), 32);
  t.is(envWholeNumber('PLATFORM_X', 32, { PLATFORM_X: '7' }), 7);
});

test('envWholeNumber: anything else is refused, naming the variable, the rule and the value', (t) => {
  for (const bad of ['0', '-3', '2.5', 'lots', '1e400', '9007199254740993']) {
    t.throws(() => envWholeNumber('PLATFORM_X', 32, { PLATFORM_X: bad }), { message: `PLATFORM_X must be a whole number of at least 1, got "${bad}"` });
  }
});

test('envNumber: a number >= min, the default when unset, and an error naming the variable otherwise', (t) => {
  t.is(envNumber('PLATFORM_Y', 10, 100, {}), 10);
  t.is(envNumber('PLATFORM_Y', 10, 100, { PLATFORM_Y: '250.5' }), 250.5);
  t.throws(() => envNumber('PLATFORM_Y', 10, 100, { PLATFORM_Y: '99' }), { message: "PLATFORM_Y must be a number >= 100, got '99'" });
});
