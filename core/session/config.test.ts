import test from 'ava';
import { InvalidConfigError, parseMachineConfig } from '../config/machine-config.js';
import { heartbeatWindowMs } from '../config/session-config.js';

const errorsOf = (input: unknown): string[] => {
  try {
    parseMachineConfig(input);
  } catch (err) {
    if (err instanceof InvalidConfigError) return err.errors.map((e) => e.message);
    throw err;
  }
  return [];
};

test('session.heartbeat_window defaults to 2 s and accepts ms, s and m', (t) => {
  t.is(heartbeatWindowMs(parseMachineConfig({}).session), 2000);
  t.is(heartbeatWindowMs(parseMachineConfig({ session: { heartbeat_window: '30ms' } }).session), 30);
  t.is(heartbeatWindowMs(parseMachineConfig({ session: { heartbeat_window: '1.5s' } }).session), 1500);
  t.is(heartbeatWindowMs(parseMachineConfig({ session: { heartbeat_window: '1m' } }).session), 60_000);
});

test('session.heartbeat_window outside 30 ms to 1 min, or not a duration, names the path and the rule', (t) => {
  t.deepEqual(errorsOf({ session: { heartbeat_window: '29ms' } }), ['session.heartbeat_window "29ms": must be between 30ms and 1m']);
  t.deepEqual(errorsOf({ session: { heartbeat_window: '61s' } }), ['session.heartbeat_window "61s": must be between 30ms and 1m']);
  t.deepEqual(errorsOf({ session: { heartbeat_window: '2' } }), ['session.heartbeat_window "2": must be a duration such as "2s", "500ms" or "1m"']);
  t.deepEqual(errorsOf({ session: { heartbeat_window: 2 } }), ['session.heartbeat_window 2: must be a duration string such as "2s" or "500ms"']);
  t.deepEqual(errorsOf({ session: { window: '2s' } }), ['session: unknown field(s) window']);
});
