// The bounds on messages (issue 27, finding 3): an echoed input keeps about 200 characters, a message
// 4096, whoever built it; bounding twice changes nothing.
import test from 'ava';
import { Metadata, status } from '@grpc/grpc-js';
import { boundStatusMetadata, MAX_STATUS_METADATA_BYTES } from './bounded-status.js';
import { boundMessage, echo, MAX_ECHO_CHARS, MAX_MESSAGE_CHARS } from './bounded-text.js';
import { invalidArgument, StatusError, toStatusError } from './status-error.js';

test('an echoed value keeps its first characters and says how many were left out', (t) => {
  t.is(echo('short'), 'short');
  t.is(echo('x'.repeat(MAX_ECHO_CHARS)), 'x'.repeat(MAX_ECHO_CHARS));
  const long = echo('x'.repeat(131072));
  t.is(long, `${'x'.repeat(MAX_ECHO_CHARS - 1)}… (${131072 - MAX_ECHO_CHARS + 1} more characters)`);
  t.is(boundMessage(long), long);
  // A surrogate pair is never split.
  t.false(/[\uD800-\uDBFF]…/.test(echo('😀'.repeat(300))));
});

test('a message keeps its words and rule; only the overlong input is cut, and the whole stays under 4096 characters', (t) => {
  const entity = 'e'.repeat(128 * 1024);
  const message = boundMessage(`invalid credentials for entity ${entity}`);
  t.true(message.startsWith(`invalid credentials for entity ${'e'.repeat(MAX_ECHO_CHARS - 1)}… (`), message);
  t.true(message.length < 300);
  t.is(boundMessage(message), message);
  // Many short words (an input with spaces) are cut as a whole.
  const spaced = boundMessage(`no resource named ${'a '.repeat(100_000)}`);
  t.true(spaced.length <= MAX_MESSAGE_CHARS);
  t.regex(spaced, /… \(message cut: \d+ more characters\)$/);
  t.is(boundMessage(spaced), spaced);
  // A multi-line validation error of ordinary size is untouched.
  const lines = Array.from({ length: 30 }, (_, i) => `components[${i}].model "nosuch": unknown model`).join('\n');
  t.is(boundMessage(lines), lines);
});

test('every StatusError, and whatever toStatusError maps, carries a bounded message', (t) => {
  const name = 'n'.repeat(256 * 1024);
  t.true(invalidArgument(`name ${name}: too long`).message.length < 300);
  t.true(new StatusError(status.NOT_FOUND, name).message.length < 300);
  t.true(toStatusError(new Error(`no resource named ${name}`)).message.length < 300);
  t.true(toStatusError(Object.assign(new Error(name), { code: status.NOT_FOUND })).message.length < 300);
});

test('a status keeps its trailing metadata up to 8 KiB; past that, the entries that do not fit are left out', (t) => {
  const small = new Metadata();
  small.set('retry-after', '5');
  t.is(boundStatusMetadata(small), small);
  const big = new Metadata();
  big.set('a', '1');
  big.set('huge', 'h'.repeat(100_000));
  big.set('b', '2');
  const kept = boundStatusMetadata(big);
  t.deepEqual(kept.getMap(), { a: '1', b: '2' });
  t.true(MAX_STATUS_METADATA_BYTES >= 8192);
});
