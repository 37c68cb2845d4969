import test from 'ava';
import { compileLogPattern, levelFor, OwnLogLevels, type LogRule } from './log-rules.js';

const rules = (...pairs: [string, LogRule['level']][]): LogRule[] => pairs.map(([p, level]) => ({ pattern: compileLogPattern(p), level }));

test('the default level is info', (t) => {
  t.is(levelFor('platform.components.motor.m1', { debug: false, rules: [] }), 'info');
});

test('rules apply top to bottom and the last match wins', (t) => {
  const settings = {
    debug: false,
    rules: rules(['platform.components.*', 'debug'], ['platform.components.motor.*', 'error'], ['platform.services.*', 'warn']),
  };
  t.is(levelFor('platform.components.motor.m1', settings), 'error');
  t.is(levelFor('platform.components.sensor.s1', settings), 'debug');
  t.is(levelFor('platform.services.vision.v', settings), 'warn');
  t.is(levelFor('platform.kernel', settings), 'info');
});

test('a pattern must match the whole logger name', (t) => {
  const settings = { debug: false, rules: rules(['platform.components', 'error']) };
  t.is(levelFor('platform.components.motor.m1', settings), 'info');
});

test('a bare * matches any run of characters', (t) => {
  const settings = { debug: false, rules: rules(['*.motor.*', 'warn'], ['*', 'error']) };
  t.is(levelFor('platform.components.motor.m1', settings), 'error');
  t.is(levelFor('anything', settings), 'error');
  t.true(compileLogPattern('*.motor.*').test('platform.components.motor.m1'));
});

test("a resource's own level beats the rules", (t) => {
  const settings = { debug: false, rules: rules(['platform.components.*', 'error']) };
  t.is(levelFor('platform.components.motor.m1', settings, 'debug'), 'debug');
});

test('debug mode overrides everything', (t) => {
  const settings = { debug: true, rules: rules(['.*', 'error']) };
  t.is(levelFor('platform.components.motor.m1', settings, 'error'), 'debug');
});

test("a runtime's own loggers: debug or info before a config, then the config's rules, recompiled when it changes", (t) => {
  let config: { debug: boolean; log: { pattern: string; level: 'debug' | 'info' | 'warn' | 'error' }[] } | undefined;
  const quiet = new OwnLogLevels(false, () => config);
  t.is(quiet.levelOf('platform.session'), 'info');
  t.is(new OwnLogLevels(true, () => config).levelOf('platform.session'), 'debug');
  config = { debug: false, log: [{ pattern: 'platform.*', level: 'warn' }] };
  t.is(quiet.levelOf('platform.session'), 'warn');
  config = { debug: false, log: [{ pattern: 'platform.session', level: 'error' }] };
  t.is(quiet.levelOf('platform.session'), 'error');
  t.is(quiet.levelOf('platform.server'), 'info');
  config = { ...config, debug: true };
  t.is(quiet.levelOf('platform.server'), 'debug');
});
