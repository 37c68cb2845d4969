// scripts/build-web.mjs rebuilds the pages while the programs of other test files serve them from dist/web:
// an unchanged file is left alone, and a changed one is replaced whole (renamed over the old), never
// truncated and written in place (a page loaded meanwhile got an empty app.js, or no index.html).
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist', 'web');
const buildWeb = () => execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });

/** Every file under `dir`, with its inode and modification time. */
function files(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const { ino, mtimeMs } = statSync(path);
    found[path.slice(OUT.length + 1)] = `${ino} ${mtimeMs}`;
  }
  return found;
}

test.serial('a rebuild of unchanged pages leaves every file of dist/web untouched', (t) => {
  buildWeb();
  const before = files(OUT);
  t.true(Object.keys(before).some((f) => f.endsWith('runtime/index.html')) && Object.keys(before).some((f) => f.endsWith('cloud/app.js')));
  buildWeb();
  t.deepEqual(files(OUT), before);
});

test.serial('a changed output replaces the old file whole: a new file renamed over it, not the old one rewritten', (t) => {
  buildWeb();
  const app = join(OUT, 'runtime', 'app.js');
  const built = readFileSync(app);
  // A trailing newline: still the same script for a page that loads it meanwhile.
  appendFileSync(app, '\n');
  const changed = statSync(app).ino;
  buildWeb();
  t.not(statSync(app).ino, changed, 'renamed over, not written in place');
  t.deepEqual(readFileSync(app), built);
  t.deepEqual(
    readdirSync(join(OUT, 'runtime')).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
});
