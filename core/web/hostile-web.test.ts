// The hostile-tenant suite against platform-server's web port (issue 27, finding 11): -shareddir serves
// its folder and nothing else, not even through a symbolic link placed in it; a malformed
// percent-encoding in the path is the client's mistake (400 naming the rule), never a 500.
import test from 'ava';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnRuntime } from '../server/testing/spawn-runtime.js';
import { webUrlOf } from '../serving/testing/chromium.js';

const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];

test('-shareddir does not follow symbolic links out of its folder, and a malformed percent-encoding is 400', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'platform-hostile-web-'));
  const shared = join(base, 'shared');
  const outside = join(base, 'outside');
  mkdirSync(shared);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'the secret');
  writeFileSync(join(shared, 'index.html'), '<p>page</p>');
  mkdirSync(join(shared, 'js'));
  writeFileSync(join(shared, 'js', 'app.js'), 'app()');
  symlinkSync(join(outside, 'secret.txt'), join(shared, 'leak.txt'));
  symlinkSync(outside, join(shared, 'out'));
  symlinkSync('../../outside/secret.txt', join(shared, 'js', 'relative.js'));
  // Links that stay inside the folder are fine, and so is a folder that is itself reached by a link.
  symlinkSync(join(shared, 'js', 'app.js'), join(shared, 'alias.js'));
  const viaLink = join(base, 'shared-link');
  symlinkSync(shared, viaLink);

  const runtime = await spawnRuntime({ components }, { args: ['-shareddir', viaLink] });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  const get = async (path: string) => {
    const res = await fetch(new URL(path, url));
    return { status: res.status, body: await res.text() };
  };

  t.is((await get('/')).body, '<p>page</p>');
  t.is((await get('/alias.js')).body, 'app()', 'a link inside the folder is served');
  for (const path of ['/leak.txt', '/out/secret.txt', '/js/relative.js']) {
    const res = await get(path);
    t.is(res.status, 403, path);
    t.notRegex(res.body, /the secret/, path);
    t.regex(res.body, /outside the assets folder/, path);
  }

  for (const path of ['/%zz', '/%E9', '/index.html%', '/%C0%AF']) {
    const res = await get(path);
    t.is(res.status, 400, path);
    t.regex(res.body, /malformed percent-encoding in the URL path/, path);
  }
  t.is((await get('/')).status, 200, 'the runtime still serves its page');
  t.false(runtime.output().includes('web request failed'), runtime.output());
});
