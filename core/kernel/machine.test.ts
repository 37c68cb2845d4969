import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { BOARD_API } from '../../plugins/apis/board.js';
import { GENERIC_API, createHarness, generic } from './fixtures/harness.js';

const readyOrder = (events: { key: string; state: string }[]) => events.filter((e) => e.state === 'ready').map((e) => e.key);

test.serial('resources start in dependency order and stop in reverse order', async (t) => {
  const h = await createHarness();
  // c <- b <- a (a depends on b through an implicit dependency, b on c through depends_on)
  await h.apply({ components: [generic('a', { uses: 'b' }), generic('b', {}, ['c']), generic('c', { delay_ms: 50 })] });
  t.deepEqual(readyOrder(h.events), ['c', 'b', 'a']);
  t.deepEqual(await h.machine.resource('a', GENERIC_API).describe(), {
    name: 'a',
    label: '',
    deps: { b: { name: 'b', label: '', deps: { c: { name: 'c', label: '', deps: {} } } } },
  });
  await h.stop();
  t.deepEqual(h.closed, ['a', 'b', 'c']);
});

test.serial('resources with no unmet dependency start concurrently', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [generic('x', { delay_ms: 200 }), generic('y', { delay_ms: 200 }), generic('z', { delay_ms: 200 })] });
  // All three are configuring before the first one is ready: they were constructed at the same time.
  const states = h.events.map((e) => e.state);
  t.deepEqual(states, ['configuring', 'configuring', 'configuring', 'ready', 'ready', 'ready']);
  await h.stop();
});

test.serial('config errors belong to the resource they touch and the others start', async (t) => {
  const h = await createHarness();
  await h.apply({
    components: [
      generic('ok'),
      generic('ok'),
      { name: 'widget', api: 'core:component:widget', model: 'fake' },
      { name: 'strange', api: 'core:component:sensor', model: 'nope' },
      { name: 'kind', api: 'core:widget:motor', model: 'fake' },
      generic('orphan', {}, ['ghost']),
      generic('c1', {}, ['c2']),
      generic('c2', {}, ['c1']),
      generic('after-cycle', {}, ['c1']),
      { name: 'bad-attrs', api: 'core:component:sensor', model: 'fake', attributes: { noise: -1 } },
    ],
  });
  const status = Object.fromEntries(h.machine.statuses().map((s) => [s.key, s]));
  t.is(status.ok.state, 'ready');
  t.is(status['ok@components[1]'].error, 'components[1].name "ok": duplicate name, already used by components[0]');
  t.regex(status.widget.error!, /^components\[2\]\.api "core:component:widget": unknown api; known apis: .*core:component:sensor/);
  t.is(status.strange.error, 'components[3].model "nope": unknown model for core:component:sensor; known models: fake');
  t.is(status.kind.error, 'components[4].api "core:widget:motor": kind must be component or service');
  t.is(status.orphan.error, 'components[5] "orphan": depends on "ghost", which is not configured');
  t.is(status.c1.error, 'components[6] "c1": dependency cycle: c1 -> c2 -> c1');
  t.is(status.c2.error, 'components[7] "c2": dependency cycle: c2 -> c1 -> c2');
  t.regex(status['after-cycle'].error!, /^waiting for dependencies: c1 \(unhealthy: .*cycle/);
  t.is(status['bad-attrs'].error, 'components[9].attributes.noise -1: must be at least 0');
  for (const key of Object.keys(status)) if (key !== 'ok') t.is(status[key].state, 'unhealthy', key);
  await h.stop();
});

test.serial('a constructor that throws makes the resource unhealthy, and it is rebuilt with backoff', async (t) => {
  const h = await createHarness();
  const counter = join(mkdtempSync(join(tmpdir(), 'kernel-')), 'count');
  await h.apply({ components: [generic('flaky', { fail_times: 2, counter_file: counter }), generic('dependent', {}, ['flaky']), generic('other')] });
  t.is(h.machine.status('flaky')!.state, 'unhealthy');
  t.regex(h.machine.status('flaky')!.error!, /construction failed: attempt 1 fails on purpose/);
  t.regex(h.machine.status('dependent')!.error!, /waiting for dependencies: flaky/);
  t.is(h.machine.status('other')!.state, 'ready');
  await h.waitFor(() => h.machine.status('dependent')?.state === 'ready');
  const failures = h.events.filter((e) => e.key === 'flaky' && e.state === 'unhealthy').map((e) => e.error);
  t.deepEqual(
    failures.map((e) => e!.replace(/.*(attempt \d).*/, '$1')),
    ['attempt 1', 'attempt 2'],
  );
  t.is(h.machine.status('flaky')!.state, 'ready');
  await h.stop();
});

test.serial('a construction that exceeds its timeout is aborted and reported', async (t) => {
  const h = await createHarness({ configureTimeoutMs: 1500, backoffInitialMs: 60_000 });
  await h.apply({ components: [generic('stuck', { hang: true })] });
  t.is(h.machine.status('stuck')!.error, 'construction failed: construction of test:component:generic/stuck timed out after 1500 ms');
  t.is(h.machine.status('stuck')!.state, 'unhealthy');
  await h.stop();
});

test.serial('a crashed worker makes only its resource unhealthy; it and its dependents are rebuilt', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [generic('base'), generic('top', { uses: 'base' }), generic('bystander')] });
  await h.machine.resource('base', GENERIC_API).doCommand({ crash: true });
  await h.waitFor(() => h.events.some((e) => e.key === 'base' && e.state === 'unhealthy'));
  t.regex(h.events.find((e) => e.key === 'base' && e.state === 'unhealthy')!.error!, /crashed/);
  await h.waitFor(() => h.machine.status('base')!.revision === 2 && h.machine.status('top')!.revision === 2 && h.machine.status('top')!.state === 'ready');
  t.is(h.machine.status('bystander')!.revision, 1);
  t.deepEqual(await h.machine.resource('top', GENERIC_API).describe(), {
    name: 'top',
    label: '',
    deps: { base: { name: 'base', label: '', deps: {} } },
  });
  await h.stop();
});

test.serial('reconfiguration adds, rebuilds changed resources with their dependents, removes, and leaves the rest', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [generic('board'), generic('motor', { uses: 'board' }), generic('arm', {}, ['motor']), generic('lamp'), generic('old')] });
  h.closed.length = 0;
  await h.apply({
    components: [generic('board', { label: 'v2' }), generic('motor', { uses: 'board' }), generic('arm', {}, ['motor']), generic('lamp'), generic('new')],
  });
  const revisions = Object.fromEntries(h.machine.statuses().map((s) => [s.key, s.revision]));
  t.deepEqual(revisions, { arm: 2, board: 2, lamp: 1, motor: 2, new: 1 });
  t.deepEqual([...h.closed].sort(), ['arm', 'board', 'motor', 'old']);
  t.true(h.closed.indexOf('arm') < h.closed.indexOf('motor') && h.closed.indexOf('motor') < h.closed.indexOf('board'));
  t.false(h.closed.includes('lamp'));
  t.is(h.machine.status('old'), undefined);
  t.deepEqual(await h.machine.resource('motor', GENERIC_API).describe(), {
    name: 'motor',
    label: '',
    deps: { board: { name: 'board', label: 'v2', deps: {} } },
  });
  await h.stop();
});

test.serial('removing a dependency leaves its dependent unhealthy with a clear error; adding it back recovers', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [generic('board'), generic('motor', { uses: 'board' })] });
  await h.apply({ components: [generic('motor', { uses: 'board' })] });
  t.is(h.machine.status('motor')!.error, 'components[0] "motor": depends on "board", which is not configured');
  await h.apply({ components: [generic('board'), generic('motor', { uses: 'board' })] });
  t.is(h.machine.status('motor')!.state, 'ready');
  await h.stop();
});

test.serial('the api of a call must match the resource', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [{ name: 's', api: 'core:component:sensor', model: 'fake' }] });
  t.throws(() => h.machine.resource('s', BOARD_API), { message: 'resource "s" is a core:component:sensor, not a core:component:board' });
  t.throws(() => h.machine.resource('nope', GENERIC_API), { message: 'no resource named "nope"' });
  t.deepEqual(await h.machine.resource('s', SENSOR_API).getReadings({}), { a: 1, b: 2, c: 3 });
  await h.stop();
});

test.serial('statistics report each resource state, whether its worker lives, and the calls made to it', async (t) => {
  const h = await createHarness();
  await h.apply({ components: [generic('a'), generic('orphan', {}, ['ghost'])] });
  await h.machine.resource('a', GENERIC_API).describe();
  await h.machine.resource('a', GENERIC_API).describe();
  const stats = Object.fromEntries(h.machine.statistics().map((s) => [s.key, s]));
  t.like(stats.a, { state: 'ready', revision: 1, workerAlive: true, calls: 2 });
  t.like(stats.orphan, { state: 'unhealthy', workerAlive: false, calls: 0 });
  await h.stop();
  t.false(h.machine.statistics().some((s) => s.workerAlive));
});
