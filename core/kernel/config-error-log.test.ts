// A resource's config error reaches the log, not only GetMachineStatus: once per config revision, with
// its path and rule, even when many resources share the same kind of error.
import test from 'ava';
import { createHarness, generic } from './fixtures/harness.js';

const configErrorLines = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('invalid config for resource '));

test.serial('each config error is logged once per revision with its path and rule', async (t) => {
  const h = await createHarness();
  const bad = Array.from({ length: 13 }, (_, i) => ({ name: `bad${i}`, api: 'core:component:sensor', model: 'fake', attributes: { noise: -1 - i } }));
  const config = { components: [generic('ok'), ...bad] };
  await h.apply(config);
  const first = configErrorLines(h.lines());
  t.is(first.length, 13);
  t.is(first[0].msg, 'invalid config for resource bad0: components[1].attributes.noise -1: must be at least 0');
  t.is(first[12].error, 'components[13].attributes.noise -13: must be at least 0');
  t.is(first[0].level, 50);
  // A refresh (modules changed) of the same revision does not repeat them.
  await h.machine.refresh();
  t.is(configErrorLines(h.lines()).length, 13);
  // A new revision logs its errors again, once.
  await h.apply({ components: [generic('ok', { label: 'v2' }), ...bad.slice(0, 2)] });
  t.is(configErrorLines(h.lines()).length, 15);
  await h.stop();
});
