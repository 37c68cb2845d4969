import test from 'ava';
import { describeChanges, diffConfigs, secretPath } from './diff.js';

const sensor = (attributes: Record<string, unknown>) => ({ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes });

test('a config diff keeps keys, paths and ordinary values, and redacts only what may be a secret', (t) => {
  const before = { cloud: { id: 'p', secret: 's1', app_address: 'http://a' }, components: [sensor({ noise: 0.2, api_key: 'k1' })] };
  const after = {
    cloud: { id: 'p', secret: 's2', app_address: 'http://b' },
    components: [
      sensor({ noise: 0.5, api_key: 'k2' }),
      { name: 'cam', api: 'core:component:camera', model: 'ip', attributes: { url: 'rtsp://admin:hunter2@10.0.0.9/live', password: 'pw', fps: 10 } },
    ],
  };
  const lines = describeChanges(diffConfigs(before, after), false);
  t.deepEqual(lines, [
    '~ cloud.app_address: <redacted> -> <redacted>',
    '~ cloud.secret: <redacted> -> <redacted>',
    '~ components[thermo].attributes.api_key: <redacted> -> <redacted>',
    '~ components[thermo].attributes.noise: 0.2 -> 0.5',
    '+ components[cam]: {"name":"cam","api":"core:component:camera","model":"ip","attributes":{"url":"rtsp://<redacted>@10.0.0.9/live","password":"<redacted>","fps":10}}',
  ]);
  for (const secret of ['s1', 's2', 'k1', 'k2', 'hunter2', '"pw"']) t.false(lines.join('\n').includes(secret), secret);
  // -reveal-sensitive-config-diffs shows everything.
  t.true(describeChanges(diffConfigs(before, after), true).join('\n').includes('hunter2'));
});

test('secret paths: secret-looking keys anywhere, and the cloud section', (t) => {
  for (const path of [
    'cloud.id',
    'components[x].attributes.api_key',
    'x.signing_key',
    'x.apiKey',
    'services[y].attributes.auth_token',
    'a.wifiPassword',
    'a.private_key',
  ]) {
    t.true(secretPath(path), path);
  }
  for (const path of ['components[x].attributes.noise', 'network.bind_address', 'components[monkey].attributes.keyboard_layout', 'log[0].level']) {
    t.false(secretPath(path), path);
  }
});
