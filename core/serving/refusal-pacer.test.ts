// RefusalPacer (issue 27, items 2 and 3): refusals past an address's allowance wait, longer each time up
// to a cap; other addresses and a new window start free; held places are bounded and given back.
import test from 'ava';
import { EventEmitter } from 'node:events';
import { RefusalPacer } from './refusal-pacer.js';

function pacerAt(start = 0) {
  const clock = { now: start };
  const pacer = new RefusalPacer({ freePerWindow: 3, windowMs: 1000, stepMs: 10, maxDelayMs: 35, maxHeldPerAddress: 2, now: () => clock.now });
  return { pacer, clock };
}

test('the allowance is answered at once; each refusal past it waits one step longer, up to the cap', (t) => {
  const { pacer } = pacerAt();
  const waits = [];
  for (let i = 0; i < 3; i++) waits.push(pacer.delayFor('10.0.0.1'));
  t.deepEqual(waits, [0, 0, 0]);
  t.is(pacer.delayFor('10.0.0.1'), 10);
  pacer.release('10.0.0.1');
  t.is(pacer.delayFor('10.0.0.1'), 20);
  pacer.release('10.0.0.1');
  t.is(pacer.delayFor('10.0.0.1'), 30);
  pacer.release('10.0.0.1');
  t.is(pacer.delayFor('10.0.0.1'), 35, 'capped at maxDelayMs');
});

test('another address has an allowance of its own, and a new window starts free again', (t) => {
  const { pacer, clock } = pacerAt();
  for (let i = 0; i < 3; i++) pacer.delayFor('10.0.0.1');
  t.true(pacer.delayFor('10.0.0.1') > 0);
  pacer.release('10.0.0.1');
  t.is(pacer.delayFor('10.0.0.2'), 0, 'another address is not paced for the first one');
  clock.now += 1000;
  t.is(pacer.delayFor('10.0.0.1'), 0, 'a new window');
});

test('at most maxHeldPerAddress refusals wait at once; more are answered at once; a release frees a place', (t) => {
  const { pacer } = pacerAt();
  for (let i = 0; i < 3; i++) pacer.delayFor('10.0.0.1');
  t.true(pacer.delayFor('10.0.0.1') > 0);
  t.true(pacer.delayFor('10.0.0.1') > 0);
  t.is(pacer.heldFor('10.0.0.1'), 2);
  t.is(pacer.delayFor('10.0.0.1'), 0, 'a third at once: holding more is not bounded');
  pacer.release('10.0.0.1');
  t.true(pacer.delayFor('10.0.0.1') > 0);
});

test('pace answers after the wait, and a caller gone first is not answered and gives its place back', async (t) => {
  const pacer = new RefusalPacer({ freePerWindow: 0, stepMs: 20, maxDelayMs: 20 });
  const answered = await new Promise<boolean>((resolve) => pacer.pace('10.0.0.1', () => resolve(true)));
  t.true(answered);
  t.is(pacer.heldFor('10.0.0.1'), 0, 'released after answering');
  const slow = new RefusalPacer({ freePerWindow: 0, stepMs: 60_000, maxDelayMs: 60_000 });
  const socket = new EventEmitter();
  let called = false;
  slow.pace('10.0.0.1', () => (called = true), socket);
  t.is(slow.heldFor('10.0.0.1'), 1);
  socket.emit('close');
  t.is(slow.heldFor('10.0.0.1'), 0);
  t.false(called);
  t.is(socket.listenerCount('close'), 0, 'no listener left on the socket');
});

test('addresses remembered are bounded; the least recently refused are forgotten first', (t) => {
  const pacer = new RefusalPacer({ freePerWindow: 1, maxAddresses: 2 });
  pacer.delayFor('a');
  pacer.delayFor('b');
  pacer.delayFor('c');
  t.is(pacer.delayFor('a'), 0, "'a' was forgotten, so it starts free again");
  t.true(pacer.delayFor('c') > 0, "'c' is remembered");
});
