// The manuals may not drift from the tree: every manual of the repository passes the rules of
// manual-check.ts (links to files and headings that exist, source paths that exist), and each rule
// fails on a manual that breaks it, with a message naming the manual, the line and what is missing.
import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchorOf, checkManual, listManuals } from './manual-check.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('every manual of the repository links only to files, headings and source paths that exist', (t) => {
  const manuals = listManuals(root);
  t.true(manuals.includes('README.md') && manuals.includes('core/README.md'), 'the manuals are found');
  const problems = manuals.flatMap((manual) => checkManual(root, manual)).map((p) => `${p.manual}:${p.line}: ${p.message}`);
  t.deepEqual(problems, []);
});

test('README.md stays the front door: at most 250 lines', (t) => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n').length;
  t.true(lines <= 250, `README.md has ${lines} lines`);
});

/** A small repository in a temp folder: a source file, a folder and a manual with two headings. */
function fixture(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'manuals-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'core/kernel'), { recursive: true });
  writeFileSync(join(dir, 'core/kernel/machine.ts'), '');
  writeFileSync(join(dir, 'core/README.md'), '# Core\n\n## The `Machine` (kernel)\n\n## Flags\n\n## Flags\n');
  return dir;
}

test('a link to a file that does not exist fails, naming manual, line and file', (t) => {
  const dir = fixture(t);
  const problems = checkManual(dir, 'README.md', '# Front\n\nSee [core](core/README.md) and\n[gone](core/missing.md).\n');
  t.deepEqual(problems, [{ manual: 'README.md', line: 4, message: 'link to core/missing.md: core/missing.md does not exist' }]);
});

test('a link to a heading that does not exist fails; existing ones, repeated ones and GitHub anchors pass', (t) => {
  const dir = fixture(t);
  const text = '# Front\n\n[a](core/README.md#the-machine-kernel) [b](core/README.md#flags-1) [c](#front)\n[d](core/README.md#lifecycle) [e](#nowhere)\n';
  t.deepEqual(checkManual(dir, 'README.md', text), [
    { manual: 'README.md', line: 4, message: 'link to core/README.md#lifecycle: core/README.md has no heading with anchor #lifecycle' },
    { manual: 'README.md', line: 4, message: 'link to #nowhere: README.md has no heading with anchor #nowhere' },
  ]);
});

test('a source path in backticks must exist from the repository root; patterns and fenced code are not checked', (t) => {
  const dir = fixture(t);
  const text = [
    '# Front',
    'The kernel is `core/kernel/machine.ts`, in `core/kernel/`; `core/kernel/atomic-file.ts` was removed.',
    'Patterns: `drivers/<model>/driver.ts`, `core/**/*.test.ts`. Built: `dist/core/server/main.js`.',
    '```sh',
    'cat core/missing.ts `core/also-missing.ts`',
    '```',
  ].join('\n');
  t.deepEqual(checkManual(dir, 'README.md', text), [
    {
      manual: 'README.md',
      line: 2,
      message:
        '`core/kernel/atomic-file.ts` names a source path that does not exist (paths that start at a top-level folder are read from the repository root)',
    },
  ]);
});

test("a file name in a manual's code map must exist below the manual's folder", (t) => {
  const dir = fixture(t);
  const text = '# Core\n\n| `machine.ts` | the kernel |\n| `atomic-file.ts` | durable files |\n';
  t.deepEqual(checkManual(dir, 'core/README.md', text), [
    {
      manual: 'core/README.md',
      line: 4,
      message: '`atomic-file.ts` names a source file that does not exist in core or below (write a path of another folder from the repository root)',
    },
  ]);
});

test("GitHub's anchors: lower case, punctuation dropped, spaces as dashes", (t) => {
  t.is(anchorOf('The agent (`platform-agent`)'), 'the-agent-platform-agent');
  t.is(anchorOf('Depth cameras and the `obstacles_depth` vision service'), 'depth-cameras-and-the-obstacles_depth-vision-service');
  t.is(anchorOf('Querying data: SQL, MQL, pipelines and the database connection'), 'querying-data-sql-mql-pipelines-and-the-database-connection');
});
