// The -config file is followed through every save (issue 29, item 2): saves by rename (editors, `sed -i`,
// SaveConfig) replace the file's inode, and two of them back to back once lost the watch for good. Each
// round here saves twice with the real `sed -i` and waits until the change reported last reads as the
// second save.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../serving/testing/eventually.js';
import { ConfigFile } from './config-file.js';

const configWith = (t: number) =>
  JSON.stringify({ components: [{ name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t } } }] }, null, 2);
const valueIn = (file: ConfigFile) => (file.read().raw as { components: { attributes: { readings: { t: number } } }[] }).components[0].attributes.readings.t;

function watched(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'config-file-'));
  const path = join(dir, 'machine.json');
  writeFileSync(path, configWith(0));
  const file = new ConfigFile(path);
  const seen = { changes: 0, value: 0 };
  t.teardown(() => {
    void file.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // As the runtime does: each reported change is read.
  const started = file.watch(() => {
    seen.changes++;
    seen.value = valueIn(file);
  });
  return { path, file, seen, started };
}

test('repeated double saves by rename (sed -i twice) are each applied', async (t) => {
  const { path, seen, started } = watched(t);
  await started;
  let value = 0;
  for (let round = 1; round <= 8; round++) {
    for (let save = 0; save < 2; save++) execFileSync('sed', ['-i', '-E', `s/"t": [0-9]+/"t": ${++value}/`, path]);
    await eventually(
      () => seen.value,
      (v) => v === value,
      { what: `round ${round}: the second save (t ${value}) applied`, timeoutMs: 10_000 },
    );
  }
  t.is(seen.value, 16, 'the config applied last is the last one written');
});

test('saves by rename through a temporary file, several in a row, end on the last one; an unchanged save is no change', async (t) => {
  const { path, seen, started } = watched(t);
  await started;
  for (let v = 1; v <= 20; v++) {
    writeFileSync(`${path}.tmp`, configWith(v));
    renameSync(`${path}.tmp`, path);
  }
  await eventually(
    () => seen.value,
    (v) => v === 20,
    { what: 'the last of 20 quick saves applied', timeoutMs: 10_000 },
  );
  const changes = seen.changes;
  writeFileSync(`${path}.tmp`, configWith(20));
  renameSync(`${path}.tmp`, path);
  writeFileSync(`${path}.tmp`, configWith(21));
  renameSync(`${path}.tmp`, path);
  await eventually(
    () => seen.value,
    (v) => v === 21,
    { what: 'a save after an unchanged one applied', timeoutMs: 10_000 },
  );
  t.true(seen.changes > changes);
});
