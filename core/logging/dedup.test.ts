import test from 'ava';
import { Deduplicator } from './dedup.js';

test('the first three repeats within 10 s are emitted, the fourth becomes a notice, later ones drop', (t) => {
  const dedup = new Deduplicator();
  const verdicts = [0, 1000, 2000, 3000, 4000, 5000].map((at) => dedup.check('m', at).action);
  t.deepEqual(verdicts, ['emit', 'emit', 'emit', 'notice', 'drop', 'drop']);
});

test('after the noisy window, the count of dropped repeats is reported and the message flows again', (t) => {
  const dedup = new Deduplicator();
  for (const at of [0, 100, 200, 300, 400]) dedup.check('m', at);
  t.deepEqual(dedup.sweep(5_000), []);
  t.deepEqual(dedup.sweep(10_200), [{ key: 'm', count: 2 }]);
  t.is(dedup.check('m', 10_300).action, 'emit');
});

test('repeats spread wider than 10 s are never noisy', (t) => {
  const dedup = new Deduplicator();
  const verdicts = [0, 6000, 12_000, 18_000, 24_000].map((at) => dedup.check('m', at).action);
  t.deepEqual(verdicts, ['emit', 'emit', 'emit', 'emit', 'emit']);
});

test('different messages are counted apart', (t) => {
  const dedup = new Deduplicator();
  for (const at of [0, 1, 2]) dedup.check('a', at);
  t.is(dedup.check('b', 3).action, 'emit');
  t.is(dedup.check('a', 4).action, 'notice');
});
