// The runtime's own loggers (platform.server, platform.kernel, platform.session, platform.ftdc) follow
// the config's `log` rules, and -log-file writes the named file.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnRuntime } from './testing/spawn-runtime.js';

const sensor = { name: 's', api: 'core:component:sensor', model: 'fake' };

test("a `.*` rule at error silences the runtime's own info lines; the stdout serving line stays", async (t) => {
  const runtime = await spawnRuntime({ components: [sensor], log: [{ pattern: '.*', level: 'error' }] });
  t.regex(runtime.output(), /platform-server serving on /);
  t.is(await runtime.stop(), 0);
  const own = runtime.logs().filter((l) => typeof l.logger === 'string' && /^platform\.(server|kernel|session|ftdc)$/.test(l.logger));
  t.deepEqual(
    own.filter((l) => (l.level as number) < 50).map((l) => l.msg),
    [],
  );
});

test('a rule for platform.server alone lets its debug lines through and leaves the others at info', async (t) => {
  const runtime = await spawnRuntime({
    components: [sensor],
    log: [
      { pattern: 'platform.server', level: 'error' },
      { pattern: 'platform.ftdc', level: 'info' },
    ],
  });
  t.is(await runtime.stop(), 0);
  t.false(runtime.logs().some((l) => l.logger === 'platform.server' && l.msg === 'serving'));
  t.true(runtime.logs().some((l) => l.logger === 'platform.ftdc' && l.msg === 'full-time data capture'));
});

test('-log-file X.log writes X.log itself', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-logfile-'));
  const file = join(dir, 'X.log');
  const runtime = await spawnRuntime({ components: [sensor] }, { args: ['-log-file', file] });
  t.is(await runtime.stop(), 0);
  t.true(existsSync(file));
  t.false(existsSync(join(dir, 'X.1.log')));
  t.regex(readFileSync(file, 'utf8'), /"msg":"serving"/);
});
