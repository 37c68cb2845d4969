// The credentials file the agent writes must be one that platform-server's -config accepts.
import test from 'ava';
import { parseMachineConfig } from '../config/machine-config.js';
import { credentialsFileContent, machineSourceOf } from './credentials.js';

test('platform-server accepts the credentials file the agent writes, in both forms', (t) => {
  for (const creds of [
    { appAddress: 'https://cloud:8081', partId: 'part-1', apiKeyId: 'kid', apiKey: 'key' },
    { appAddress: 'https://cloud:8081', partId: 'part-1', secret: 'part-secret' },
  ]) {
    const doc = JSON.parse(credentialsFileContent(creds));
    const config = parseMachineConfig(doc);
    t.is(config.cloud?.id, 'part-1');
    const back = machineSourceOf('/etc/platform.json', doc);
    t.deepEqual(back.mode === 'online' && back.credentials, creds);
  }
});

test('platform-server refuses cloud credentials with neither or both of secret and api_key', (t) => {
  t.throws(() => parseMachineConfig({ cloud: { id: 'p' } }), { message: /cloud\.secret: needs either secret or api_key/ });
  t.throws(() => parseMachineConfig({ cloud: { id: 'p', secret: 's', api_key: { id: 'k', key: 'v' } } }), { message: /needs either secret or api_key/ });
});
