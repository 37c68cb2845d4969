// Attributing an uncaught error to a module by its stack; errors of no module still end the process.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stackTouches } from './crash-guard.js';

test('a stack touches a module folder through a path or a file URL, and not through a folder sharing its prefix', (t) => {
  t.true(stackTouches('Error: x\n    at Timeout._onTimeout (file:///tmp/plugins/weather/index.js?load=2:9:63)', '/tmp/plugins/weather'));
  t.true(stackTouches('Error: x\n    at f (/tmp/plugins/weather/driver.js:1:1)', '/tmp/plugins/weather/'));
  t.false(stackTouches('Error: x\n    at f (/tmp/plugins/weather-2/driver.js:1:1)', '/tmp/plugins/weather'));
  t.false(stackTouches(undefined, '/tmp/plugins/weather'));
});

const GUARD = JSON.stringify(fileURLToPath(new URL('./crash-guard.ts', import.meta.url)));
const runScript = (body: string) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { CrashGuard } from ${GUARD};\n${body}`]);

test('an error owned by a module goes to that module and the process runs on', async (t) => {
  const { stdout } = await runScript(`
    new CrashGuard((e) => (e.message.includes('module') ? 'acme:x' : undefined), (id, e) => console.log(id + ': ' + e.message)).install();
    setTimeout(() => { throw new Error('from a module'); });
    setTimeout(() => console.log('still running'), 50);`);
  t.is(stdout, 'acme:x: from a module\nstill running\n');
});

test('an error of no module ends the process with its stack and code 1, as without the guard', async (t) => {
  const failed = await t.throwsAsync(
    runScript(`
    new CrashGuard(() => undefined, () => undefined).install();
    setTimeout(() => { throw new Error('a runtime bug'); });
    setTimeout(() => console.log('still running'), 200);`),
  );
  t.is((failed as { code?: number }).code, 1);
  t.regex((failed as { stderr?: string }).stderr ?? '', /Error: a runtime bug/);
  t.is((failed as { stdout?: string }).stdout, '');
});
