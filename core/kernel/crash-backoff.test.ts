// A driver that crashes right after each start: its failures accumulate, so the rebuild backoff grows,
// and a crash keeps the driver's own exception (message and stack) in the resource's error and the log.
import test from 'ava';
import { GENERIC_API, createHarness, generic } from './fixtures/harness.js';

const failuresLogged = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg === 'resource failed' && l.resource === 'flaky').map((l) => l.failures as number);

test.serial('a resource that crashes right after each start keeps counting failures (the backoff is not reset by a rebuild)', async (t) => {
  const h = await createHarness({ backoffInitialMs: 20, backoffMaxMs: 80, backoffResetMs: 60_000 });
  // Every failure line is needed: the log's deduplication would fold the fourth into a summary.
  await h.apply({ components: [generic('flaky', { crash_after_ms: 0 }), generic('steady')], disable_log_deduplication: true });
  await h.waitFor(() => failuresLogged(h.lines()).length >= 4);
  t.deepEqual(failuresLogged(h.lines()).slice(0, 4), [1, 2, 3, 4]);
  t.is(h.machine.status('steady')!.revision, 1);
  await h.stop();
});

test.serial('once a rebuilt resource has stayed ready for backoffResetMs, its failures count from 1 again', async (t) => {
  const h = await createHarness({ backoffInitialMs: 20, backoffMaxMs: 80, backoffResetMs: 50 });
  await h.apply({ components: [generic('flaky')] });
  const crash = () => h.machine.resource('flaky', GENERIC_API).doCommand({ crash: true });
  await crash();
  await h.waitFor(() => h.machine.status('flaky')!.revision === 2 && h.machine.status('flaky')!.state === 'ready');
  // Stays ready well past backoffResetMs, then crashes again: a first failure, not a second.
  await new Promise((r) => setTimeout(r, 500));
  await crash();
  await h.waitFor(() => failuresLogged(h.lines()).length === 2);
  t.deepEqual(failuresLogged(h.lines()), [1, 1]);
  await h.stop();
});

test.serial("a crashed worker's exception message and stack are kept in the resource's error and in the log", async (t) => {
  const h = await createHarness({ backoffInitialMs: 60_000, backoffMaxMs: 60_000 });
  await h.apply({ components: [generic('base')] });
  await h.machine.resource('base', GENERIC_API).doCommand({ crash: true });
  await h.waitFor(() => h.machine.status('base')!.state === 'unhealthy');
  const error = h.machine.status('base')!.error!;
  t.regex(error, /^crashed: Error: base crashed on request\n\s+at /);
  t.regex(error, /generic-driver/);
  const line = h.lines().find((l) => l.msg === 'resource failed' && l.resource === 'base') as { error: string; stack: string };
  t.regex(line.error, /base crashed on request/);
  t.regex(line.stack, /generic-driver/);
  await h.stop();
});
