import test from 'ava';
import { parseMachineConfig } from '../../config/machine-config.js';
import { parseEndpoint, planNetworkChecks } from './plan.js';

const describe = (config: unknown) => {
  const plan = planNetworkChecks(parseMachineConfig(config), 1000);
  return { checks: plan.checks.map((c) => `${c.kind} ${c.target} (${c.purpose})`), skipped: plan.skipped };
};

test('cloud addresses are read as URLs with default ports, or as host:port', (t) => {
  t.deepEqual(parseEndpoint('https://app.example.com'), { host: 'app.example.com', port: 443 });
  t.deepEqual(parseEndpoint('http://app.example.com'), { host: 'app.example.com', port: 80 });
  t.deepEqual(parseEndpoint('https://app.example.com:8443/path'), { host: 'app.example.com', port: 8443 });
  t.deepEqual(parseEndpoint('cloud.local:8081'), { host: 'cloud.local', port: 8081 });
  t.deepEqual(parseEndpoint('[::1]:8081'), { host: '::1', port: 8081 });
  t.is(parseEndpoint('not a url'), undefined);
});

test('without a cloud section only the bind address is checked, and the cloud checks are reported as skipped', (t) => {
  t.deepEqual(describe({}), { checks: ['bind localhost:8080 (network.bind_address)'], skipped: ['cloud DNS and TCP checks: the config has no cloud section'] });
  t.deepEqual(describe({ cloud: { id: 'p', secret: 's' } }).skipped, ['cloud DNS and TCP checks: cloud.app_address is not set']);
});

test('with a cloud address: its DNS and TCP, and the DNS of hosts in pinned download URLs, each once', (t) => {
  const plan = describe({
    network: { bind_address: '0.0.0.0:9090' },
    cloud: { id: 'p', secret: 's', app_address: 'https://cloud.example.com:8443' },
    agent: { version_control: { agent: 'https://dl.example.com/agent', 'platform-server': 'https://cloud.example.com/ps' } },
  });
  t.deepEqual(plan, {
    checks: [
      'bind 0.0.0.0:9090 (network.bind_address)',
      'dns cloud.example.com (cloud.app_address)',
      'tcp cloud.example.com:8443 (cloud.app_address)',
      'dns dl.example.com (agent.version_control.agent)',
    ],
    skipped: [],
  });
});

test('an unparseable cloud address is a failed check, not a crash', async (t) => {
  const plan = planNetworkChecks(parseMachineConfig({ cloud: { id: 'p', secret: 's', app_address: 'not a url' } }), 1000);
  const cloud = plan.checks.find((c) => c.purpose === 'cloud.app_address')!;
  await t.throwsAsync(cloud.run(), { message: 'cannot be parsed as a URL or host:port' });
});
