// Release resolution rules of the agent service, against a store opened directly: the embedded DuckDB
// store and PostgreSQL (issue 33), the same tests on each.
import test, { type ExecutionContext } from 'ava';
import type { TabularStore } from '../store/tabular.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { addRelease, listReleases, resolveRelease, setChannel, ReleaseResolutionError } from './releases.js';

const sha = (c: string) => c.repeat(64);
const backends = tabularBackends(test);
const stores = new Map<string, TabularStore>();

test.before(async () => {
  for (const backend of backends) {
    const store = await backend.openForFile();
    stores.set(backend.name, store);
    const add = (version: string, platform: string, c: string) =>
      addRelease(store, { subsystem: 'platform-server', version, platform, url: `https://dl.example.com/${version}/${platform}`, sha256: sha(c) });
    await add('1.0.0', 'any', 'a');
    await add('1.1.0', 'linux/amd64', 'b');
    await add('1.1.0', 'any', 'c');
    await add('1.2.0', 'linux/arm64', 'd');
    await add('2.0.0-rc.1', 'any', 'e');
  }
});

/** Runs the test body once per backend, each against its own store. */
const both = (title: string, body: (t: ExecutionContext, store: TabularStore) => Promise<void>) => {
  for (const backend of backends) test.serial(`${backend.name}: ${title}`, (t) => body(t, stores.get(backend.name)!));
};

both('without a channel, stable is the newest release and dev includes prereleases', async (t, store) => {
  t.is((await resolveRelease(store, 'platform-server', 'stable', 'linux/amd64')).version, '1.1.0');
  t.is((await resolveRelease(store, 'platform-server', 'stable', 'linux/arm64')).version, '1.2.0');
  t.is((await resolveRelease(store, 'platform-server', 'dev', 'linux/amd64')).version, '2.0.0-rc.1');
});

both('an exact-platform build wins over an "any" build of the same version', async (t, store) => {
  t.is((await resolveRelease(store, 'platform-server', '1.1.0', 'linux/amd64')).sha256, sha('b'));
  t.is((await resolveRelease(store, 'platform-server', '1.1.0', 'windows/amd64')).sha256, sha('c'));
});

both('semver, ranges and URLs', async (t, store) => {
  t.is((await resolveRelease(store, 'platform-server', '^1.0.0', 'windows/amd64')).version, '1.1.0');
  t.is((await resolveRelease(store, 'platform-server', '~1.0.0', 'windows/amd64')).version, '1.0.0');
  const none = await t.throwsAsync(resolveRelease(store, 'platform-server', '1.2.0', 'windows/amd64'), {
    instanceOf: ReleaseResolutionError,
    message: /1\.2\.0 has no release for windows\/amd64/,
  });
  t.is(none?.errorCode, 'CLOUD_ERR_RELEASE_RESOLUTION');
  await t.throwsAsync(resolveRelease(store, 'platform-server', '^3.0.0', 'linux/amd64'), { message: /satisfies \^3\.0\.0/ });
  const url = await resolveRelease(store, 'platform-server', 'https://x.example/bin', 'linux/amd64');
  t.deepEqual([url.url, url.sha256], ['https://x.example/bin', '']);
  await t.throwsAsync(resolveRelease(store, 'agent', 'stable', 'linux/amd64'), { message: /no stable release of agent for linux\/amd64/ });
});

both('a channel pins its version, including an older one', async (t, store) => {
  await setChannel(store, { subsystem: 'platform-server', channel: 'stable', version: '1.0.0' });
  t.is((await resolveRelease(store, 'platform-server', 'stable', 'linux/amd64')).version, '1.0.0');
  const { channels } = await listReleases(store, { subsystem: 'platform-server' });
  t.deepEqual(channels, [{ subsystem: 'platform-server', channel: 'stable', version: '1.0.0' }]);
});

both('bad release input names the field', async (t, store) => {
  await t.throwsAsync(addRelease(store, { subsystem: 'kernel', version: '1.0.0', url: 'https://x/y', sha256: sha('a') }), {
    message: /subsystem must be "agent" or "platform-server"/,
  });
  await t.throwsAsync(addRelease(store, { subsystem: 'agent', version: '1.0.0', url: 'ftp://x/y', sha256: sha('a') }), {
    message: /url must be an http\(s\):\/\/ or file:\/\/ URL/,
  });
  await t.throwsAsync(addRelease(store, { subsystem: 'agent', version: '1.0.0', url: 'https://x/y', sha256: 'abc' }), {
    message: /sha256 must be 64 hex digits/,
  });
  await t.throwsAsync(addRelease(store, { subsystem: 'agent', version: '1.0.0', platform: 'Linux-x64', url: 'https://x/y', sha256: sha('a') }), {
    message: /platform must look like linux\/amd64/,
  });
  await t.throwsAsync(setChannel(store, { subsystem: 'agent', channel: 'beta', version: '1.0.0' }), { message: /channel must be "stable" or "dev"/ });
});
