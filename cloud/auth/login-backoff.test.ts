import test from 'ava';
import { status } from '@grpc/grpc-js';
import { StatusError } from '../../core/serving/status-error.js';
import { LoginBackoff, peerAddress } from './login-backoff.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

test('ten failures of a key id within the window back it off with RESOURCE_EXHAUSTED naming when to retry', (t) => {
  const c = clock();
  const gate = new LoginBackoff({ now: c.now });
  for (let i = 0; i < 9; i++) {
    gate.check('key-a', '10.0.0.1');
    gate.failed('key-a', '10.0.0.1');
  }
  t.notThrows(() => gate.check('key-a', '10.0.0.1'));
  gate.failed('key-a', '10.0.0.1');
  const err = t.throws(() => gate.check('key-a', '10.0.0.2'), { instanceOf: StatusError });
  t.is(err.code, status.RESOURCE_EXHAUSTED);
  t.regex(err.message, /key id key-a.*retry after .* \(in 60 s\)/);
  t.notThrows(() => gate.check('key-b', '10.0.0.1'), 'another key id from the same address is not affected');
  c.advance(60_000);
  t.notThrows(() => gate.check('key-a', '10.0.0.1'), 'the back-off ends after its period');
});

test('failures spread over more than the window do not add up', (t) => {
  const c = clock();
  const gate = new LoginBackoff({ now: c.now });
  for (let i = 0; i < 30; i++) {
    gate.failed('key-a', 'addr');
    c.advance(10_000);
  }
  t.notThrows(() => gate.check('key-a', 'addr'));
});

test('a success clears the key id count but not the address count', (t) => {
  const c = clock();
  const gate = new LoginBackoff({ now: c.now, maxAddressFailures: 12 });
  for (let i = 0; i < 9; i++) gate.failed('key-a', 'addr');
  gate.succeeded('key-a', 'addr');
  for (let i = 0; i < 3; i++) gate.failed('key-a', 'addr');
  t.notThrows(() => gate.check('key-a', 'other-addr'));
  const err = t.throws(() => gate.check('key-z', 'addr'));
  t.regex(err.message, /address addr/);
});

test('many failing addresses or key ids do not grow memory without bound', (t) => {
  const gate = new LoginBackoff({ maxEntries: 100 });
  for (let i = 0; i < 10_000; i++) gate.failed(`key-${i}`, `addr-${i}`);
  // The oldest entries were evicted; the newest still count.
  for (let i = 0; i < 9; i++) gate.failed('key-9999', 'addr-9999');
  t.throws(() => gate.check('key-9999', 'x'));
  t.notThrows(() => gate.check('key-0', 'addr-0'));
});

test('peer strings become addresses without the port', (t) => {
  t.is(peerAddress('ipv4:127.0.0.1:5555'), '127.0.0.1');
  t.is(peerAddress('127.0.0.1:5555'), '127.0.0.1');
  t.is(peerAddress('ipv6:[::1]:5555'), '::1');
  t.is(peerAddress('[::ffff:10.0.0.1]:80'), '::ffff:10.0.0.1');
});

test('settings come from the environment and are checked', (t) => {
  const gate = LoginBackoff.fromEnv({ PLATFORM_LOGIN_MAX_FAILURES: '3', PLATFORM_LOGIN_BACKOFF_S: '5' });
  t.is(gate.maxKeyFailures, 3);
  t.is(gate.backoffMs, 5000);
  t.throws(() => LoginBackoff.fromEnv({ PLATFORM_LOGIN_WINDOW_S: 'soon' }), { message: /PLATFORM_LOGIN_WINDOW_S must be a number/ });
});

test('an IPv4 client seen through a dual-stack socket counts as the same address', (t) => {
  const gate = new LoginBackoff({ maxAddressFailures: 2, maxKeyFailures: 100 });
  gate.failed('key-1', '::ffff:10.0.0.7'); // as a PostgreSQL socket may report it
  gate.failed('key-2', '10.0.0.7'); // as gRPC reports it
  const err = t.throws(() => gate.check('key-3', '10.0.0.7'));
  t.regex(err.message, /address 10\.0\.0\.7/);
  t.throws(() => gate.check('key-3', '::ffff:10.0.0.7'));
  t.notThrows(() => gate.check('key-3', '::1'));
});
