// The training settings from the environment (training-settings.ts): a bad value refuses to start the
// program with an error naming the variable and the rule, never silently becomes the default.
import test from 'ava';
import { trainingSettingsFromEnv } from './training-settings.js';

function withEnv<T>(name: string, value: string | undefined, fn: () => T): T {
  const before = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  }
}

test('PLATFORM_TRAINING_JOB_MAX_TAKES: 3 when unset, a whole number >= 1 otherwise', (t) => {
  t.is(
    withEnv('PLATFORM_TRAINING_JOB_MAX_TAKES', undefined, () => trainingSettingsFromEnv().maxJobTakes),
    3,
  );
  t.is(
    withEnv('PLATFORM_TRAINING_JOB_MAX_TAKES', '1', () => trainingSettingsFromEnv().maxJobTakes),
    1,
  );
  for (const bad of ['0', '-1', '2.5', 'three']) {
    t.throws(() => withEnv('PLATFORM_TRAINING_JOB_MAX_TAKES', bad, () => trainingSettingsFromEnv()), {
      message: `PLATFORM_TRAINING_JOB_MAX_TAKES must be a whole number of at least 1, got "${bad}"`,
    });
  }
});
