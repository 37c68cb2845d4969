import test from 'ava';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDACTED_SECRET, redactedConfigText, saveConfigFile } from './config-edit.js';

const withSecrets = {
  components: [],
  cloud: { id: 'p1', secret: 's3cret', app_address: 'http://localhost:1', api_key: { id: 'k', key: 'kk' } },
};

test('the shown config hides the cloud secrets and nothing else', (t) => {
  const text = redactedConfigText(withSecrets);
  t.false(text.includes('s3cret'));
  t.false(text.includes('"kk"'));
  t.deepEqual(JSON.parse(text), {
    components: [],
    cloud: { id: 'p1', secret: REDACTED_SECRET, app_address: 'http://localhost:1', api_key: { id: 'k', key: REDACTED_SECRET } },
  });
  t.deepEqual(withSecrets.cloud.secret, 's3cret', 'the running config is not changed');
  t.is(redactedConfigText({ components: [] }), '{\n  "components": []\n}');
});

test('an invalid config is not written: its errors name the path and the rule', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-edit-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, '{"components": []}');
  const bad = await saveConfigFile(path, JSON.stringify({ components: [], network: { bind_address: 'nowhere' }, debug: 'yes' }), {});
  t.false(bad.saved);
  t.deepEqual(bad.errors.map((e) => [e.path, e.rule]).sort(), [
    ['debug', 'must be true or false'],
    ['network.bind_address', 'must have the shape host:port, e.g. localhost:8080 or 0.0.0.0:8080'],
  ]);
  for (const e of bad.errors) t.true(e.message.startsWith(e.path) && e.message.endsWith(e.rule), e.message);
  const notJson = await saveConfigFile(path, '{', {});
  t.deepEqual(
    notJson.errors.map((e) => e.path),
    ['config_json'],
  );
  t.regex(notJson.errors[0].rule, /is not valid JSON/);
  t.is(readFileSync(path, 'utf8'), '{"components": []}');
  t.deepEqual(readdirSync(dir), ['config.json'], 'no temp file left behind');
});

const withSecret = { components: [], cloud: { id: 'p1', secret: 's3cret', app_address: 'http://localhost:1' } };

test('a valid config is written over the file, keeping its permissions and the secrets the editor never saw', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-edit-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(withSecret), { mode: 0o600 });
  const edited = JSON.parse(redactedConfigText(withSecret)) as typeof withSecret;
  edited.components = [{ name: 's', api: 'core:component:sensor', model: 'fake', attributes: {} }] as never;
  t.is(edited.cloud.secret, REDACTED_SECRET);
  const ok = await saveConfigFile(path, JSON.stringify(edited), withSecret);
  t.deepEqual(ok, { saved: true, errors: [] });
  const written = JSON.parse(readFileSync(path, 'utf8')) as typeof withSecret;
  t.is(written.cloud.secret, 's3cret');
  t.is((written.components as unknown as { name: string }[])[0].name, 's');
  t.is(statSync(path).mode & 0o777, 0o600);
  t.deepEqual(readdirSync(dir), ['config.json']);
});
