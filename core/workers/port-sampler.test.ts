// Samplers over a dependency channel: the dependency's side calls its driver on schedule and posts the
// results in batches; the dependent's side routes them and stops cleanly.
import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { portChannel, servePort } from './port-rpc.js';
import type { Sample, SampleBatch } from './port-sampler.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function connect(driver: object) {
  const { port1, port2 } = new MessageChannel();
  servePort(port1, () => driver, 'dep');
  const channel = portChannel(port2, 'dep');
  return { channel, close: () => (port1.close(), port2.close()) };
}

function collect() {
  const batches: SampleBatch[] = [];
  const samples = (): Sample[] => batches.flatMap((b) => b.samples);
  return { batches, samples, onBatch: (b: SampleBatch) => void batches.push(b) };
}

test('a sampler makes its calls in order in the dependency, posts them in batches, and times are unique and increasing', async (t) => {
  let n = 0;
  const { channel, close } = connect({
    read: async (scale: number) => ++n * scale,
    label: () => 'x',
  });
  const got = collect();
  const handle = channel.sample(
    {
      calls: [
        { method: 'read', args: [10] },
        { method: 'label', args: [] },
      ],
      frequencyHz: 200,
      flushMs: 20,
    },
    got.onBatch,
  );
  await sleep(300);
  await handle.stop();
  const samples = got.samples();
  t.true(samples.length > 5, `only ${samples.length} samples`);
  t.true(got.batches.length < samples.length, 'samples travel together');
  samples.forEach((s, i) => {
    t.deepEqual(s.values, [(i + 1) * 10, 'x']);
    t.true(s.received >= s.requested);
    if (i > 0) t.true(s.requested > samples[i - 1].requested);
  });
  // Stopped: nothing more arrives.
  const count = samples.length;
  await sleep(50);
  t.is(got.samples().length, count);
  close();
});

test('a slow sampler (50 Hz or less) never takes a sample before it is due', async (t) => {
  // The event loop's timers are whole milliseconds and fire up to 1 ms early; the futex wait makes up the rest.
  const { channel, close } = connect({ read: () => 1 });
  const got = collect();
  const handle = channel.sample({ calls: [{ method: 'read', args: [] }], frequencyHz: 50, flushMs: 0 }, got.onBatch);
  while (got.samples().length < 25) await sleep(20);
  await handle.stop();
  const early = got.samples().filter((s) => s.lateMs < 0);
  t.deepEqual(
    early.map((s) => s.lateMs),
    [],
    'samples taken before their tick',
  );
  close();
});

test('a failing call is a sample with the error; the sampler keeps going', async (t) => {
  let calls = 0;
  const { channel, close } = connect({
    read: async () => {
      if (++calls === 2) throw Object.assign(new Error('sensor unplugged'), { code: 'UNAVAILABLE' });
      return calls;
    },
  });
  const got = collect();
  const handle = channel.sample({ calls: [{ method: 'read', args: [] }], frequencyHz: 100, flushMs: 0 }, got.onBatch);
  while (got.samples().length < 4) await sleep(10);
  await handle.stop();
  const [first, second, third] = got.samples();
  t.deepEqual(first.values, [1]);
  t.is(second.values, undefined);
  t.is(second.error?.message, 'sensor unplugged');
  t.is(second.error?.resource, 'dep');
  t.deepEqual(third.values, [3]);
  close();
});

test('a method the driver lacks is an UNIMPLEMENTED error sample', async (t) => {
  const { channel, close } = connect({});
  const got = collect();
  const handle = channel.sample({ calls: [{ method: 'nope', args: [] }], frequencyHz: 100, flushMs: 0 }, got.onBatch);
  while (got.samples().length < 1) await sleep(10);
  await handle.stop();
  t.is(got.samples()[0].error?.code, 'UNIMPLEMENTED');
  t.regex(got.samples()[0].error!.message, /does not implement nope/);
  close();
});

test('ticks that come while a call still runs are skipped and counted, and stop waits for the call in progress', async (t) => {
  let finished = 0;
  const { channel, close } = connect({
    slow: async () => {
      await sleep(60);
      return ++finished;
    },
  });
  const got = collect();
  const handle = channel.sample({ calls: [{ method: 'slow', args: [] }], frequencyHz: 100, flushMs: 0 }, got.onBatch);
  await sleep(150);
  await handle.stop();
  const skipped = got.batches.reduce((sum, b) => sum + b.skipped, 0);
  t.true(skipped >= 3, `skipped ${skipped}`);
  // The call in progress when stop came was delivered in the final batch.
  t.is(got.samples().length, finished);
  t.deepEqual(
    got.samples().map((s) => s.values![0]),
    Array.from({ length: finished }, (_, i) => i + 1),
  );
  close();
});

test('stopping twice, or after the channel closed, resolves', async (t) => {
  const { channel, close } = connect({ read: () => 1 });
  const got = collect();
  const handle = channel.sample({ calls: [{ method: 'read', args: [] }], frequencyHz: 50, flushMs: 0 }, got.onBatch);
  await handle.stop();
  await handle.stop();
  const other = channel.sample({ calls: [{ method: 'read', args: [] }], frequencyHz: 50, flushMs: 0 }, got.onBatch);
  close();
  await other.stop();
  t.pass('stop resolved in both cases');
});
