import test from 'ava';
import { parseVersionSpec, VersionSpecError } from './version-spec.js';

test('channels, semver and ranges', (t) => {
  t.deepEqual(parseVersionSpec('stable'), { kind: 'channel', channel: 'stable' });
  t.deepEqual(parseVersionSpec('dev'), { kind: 'channel', channel: 'dev' });
  t.deepEqual(parseVersionSpec('0.2.1'), { kind: 'semver', version: '0.2.1' });
  t.deepEqual(parseVersionSpec('v1.2.3'), { kind: 'semver', version: '1.2.3' });
  t.deepEqual(parseVersionSpec('^0.2.0'), { kind: 'range', range: '^0.2.0' });
});

test('http(s) URLs', (t) => {
  t.deepEqual(parseVersionSpec('https://example.com/a/b'), { kind: 'url', url: 'https://example.com/a/b' });
  t.is(t.throws(() => parseVersionSpec('http://'), { instanceOf: VersionSpecError })?.errorCode, 'CORE_ERR_VERSION_SPEC');
});

test('file URLs, POSIX and Windows', (t) => {
  t.deepEqual(parseVersionSpec('file:///opt/x/platform-server'), { kind: 'file', path: '/opt/x/platform-server', windows: false });
  t.deepEqual(parseVersionSpec('file://localhost/opt/x'), { kind: 'file', path: '/opt/x', windows: false });
  t.deepEqual(parseVersionSpec('file:///opt/my%20dir/x'), { kind: 'file', path: '/opt/my dir/x', windows: false });
  t.deepEqual(parseVersionSpec('file:///C:/Program%20Files/p/server.exe'), { kind: 'file', path: 'C:\\Program Files\\p\\server.exe', windows: true });
  t.deepEqual(parseVersionSpec('file://C:\\p\\server.exe'), { kind: 'file', path: 'C:\\p\\server.exe', windows: true });
  t.deepEqual(parseVersionSpec('file:///c:\\p\\server.exe'), { kind: 'file', path: 'c:\\p\\server.exe', windows: true });
  t.deepEqual(parseVersionSpec('file://fileserver/share/server.exe'), { kind: 'file', path: '\\\\fileserver\\share\\server.exe', windows: true });
});

test('file URLs that name no file are refused', (t) => {
  for (const v of ['file:///', 'file:///C:/', 'file:relative/x', 'file:///opt/dir/']) {
    t.is(t.throws(() => parseVersionSpec(v), { instanceOf: VersionSpecError }, v)?.errorCode, 'CORE_ERR_VERSION_SPEC');
  }
});

test('anything else is refused with the accepted forms', (t) => {
  const err = t.throws(() => parseVersionSpec('latest'), { instanceOf: VersionSpecError });
  t.is(err?.errorCode, 'CORE_ERR_VERSION_SPEC');
  t.regex(err!.message, /"stable", "dev", a semantic version/);
  t.throws(() => parseVersionSpec(''));
  t.throws(() => parseVersionSpec('ftp://x/y'));
});
