import test from 'ava';
import { ProcessSampler } from './process-sampler.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a blocked event loop shows in the delay of the next sample, and the sample after starts afresh', async (t) => {
  const sampler = new ProcessSampler();
  t.teardown(() => sampler.close());
  await sleep(50);
  const until = Date.now() + 200;
  while (Date.now() < until) {
    // Keeps the main thread busy: the loop cannot run the histogram's timer meanwhile.
  }
  await sleep(50);
  const blocked = sampler.sample();
  t.true(blocked.event_loop_delay_max_ms >= 150, `max ${blocked.event_loop_delay_max_ms} ms`);
  t.true(blocked.cpu_user_ms > 0, 'the busy wait is counted as CPU time');
  await sleep(50);
  t.true(sampler.sample().event_loop_delay_max_ms < blocked.event_loop_delay_max_ms, 'the histogram is reset after each sample');
});
