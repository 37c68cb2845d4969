// Runs the Python client's pytest suite (cloud/client/python/tests, against a live platform-cloud) so that
// `npm test`, and CI with it, runs it too. Debian's python3-pytest with /usr/bin/python3, whose
// python3-grpcio, python3-protobuf and python3-bson the client uses (.ci/apt-packages.txt).
import test from 'ava';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');

test('the Python client passes its pytest suite against a live platform-cloud', async (t) => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = execFile(
      '/usr/bin/python3',
      ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', join(here, 'tests')],
      { cwd: root, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}\n${stderr}` }),
    );
  });
  // pytest exits 5 when it collected nothing: a suite that silently vanished must fail too.
  t.is(code, 0, `pytest exited with ${code}:\n${output}`);
  const passed = Number(/(\d+) passed/.exec(output)?.[1] ?? 0);
  t.true(passed > 0, `pytest reported no passed tests:\n${output}`);
  t.notRegex(output, /\d+ (failed|error)/, output);
  t.log(output.trim().split('\n').at(-1));
});
