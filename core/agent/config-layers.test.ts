// Config layering: built-in defaults, then manufacturer defaults, then the cloud's (or offline) agent object.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { effectiveAgentConfig, mergeLayers, readDefaultsLayer } from './config-layers.js';
import { ConfigError } from '../../plugins/validation.js';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';
import { readRuntimeLog, writeFakeRuntime } from './testing/fake-runtime.js';

test('later layers override field by field; maps merge by key; arrays are replaced', (t) => {
  const merged = mergeLayers(
    { advanced_settings: { platform_server_env: { A: '1', B: '1' }, debug: true }, additional_networks: { a: { type: 'wired', ipv4_dns: ['1.1.1.1'] } } },
    { advanced_settings: { platform_server_env: { B: '2' } }, additional_networks: { a: { ipv4_dns: ['8.8.8.8'] }, b: { type: 'wifi' } } },
  );
  t.deepEqual(merged, {
    advanced_settings: { platform_server_env: { A: '1', B: '2' }, debug: true },
    additional_networks: { a: { type: 'wired', ipv4_dns: ['8.8.8.8'] }, b: { type: 'wifi' } },
  });
});

test('a layer key "__proto__" stays an own key that validation names, never the merged layer\'s prototype (issue 27)', (t) => {
  // The cloud's agent object arrives as a Struct, which keeps "__proto__" as data.
  const over = JSON.parse('{"advanced_settings": {"__proto__": {"debug": true}}, "__proto__": {"platform_server_env": {"X": "1"}}}') as Record<string, unknown>;
  const merged = mergeLayers({ advanced_settings: { debug: false } }, over);
  t.is(Object.getPrototypeOf(merged), Object.prototype);
  t.is((merged as { platform_server_env?: unknown }).platform_server_env, undefined, 'nothing is inherited');
  t.is((merged.advanced_settings as { debug: boolean }).debug, false);
  t.deepEqual(Object.keys(merged), ['advanced_settings', '__proto__']);
  t.throws(() => effectiveAgentConfig([{ name: 'cloud', layer: over }]), { message: /__proto__/ });
});

test('built-in defaults fill what no layer sets', (t) => {
  const cfg = effectiveAgentConfig([
    {
      name: 'defaults',
      layer: {
        network_configuration: { hotspot_prefix: 'acme-setup', manufacturer: 'Acme' },
        advanced_settings: { platform_server_start_timeout_minutes: 20 },
      },
    },
    { name: 'cloud', layer: { network_configuration: { manufacturer: 'Acme Robotics' } } },
  ]);
  t.is(cfg.network_configuration.hotspot_prefix, 'acme-setup', 'manufacturer default kept');
  t.is(cfg.network_configuration.manufacturer, 'Acme Robotics', 'cloud wins over the manufacturer');
  t.is(cfg.advanced_settings.platform_server_start_timeout_minutes, 20);
  t.is(cfg.network_configuration.user_idle_minutes, 5, 'built-in default');
  t.is(cfg.version_control['platform-server'], 'stable');
});

test('an invalid layer is reported under its own name', (t) => {
  const err = t.throws(() => effectiveAgentConfig([{ name: '/etc/platform-defaults.json:agent', layer: { advanced_settings: { debug: 'yes' } } }]), {
    instanceOf: ConfigError,
  });
  t.is(err!.path, '/etc/platform-defaults.json:agent.advanced_settings.debug');
});

test('the defaults file may hold the agent object or a document with an agent object; missing is empty', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-agent-defaults-'));
  const a = join(dir, 'a.json');
  const b = join(dir, 'b.json');
  writeFileSync(a, JSON.stringify({ advanced_settings: { debug: true } }));
  writeFileSync(b, JSON.stringify({ agent: { advanced_settings: { debug: true } } }));
  t.deepEqual(await readDefaultsLayer(a), { advanced_settings: { debug: true } });
  t.deepEqual(await readDefaultsLayer(b), { advanced_settings: { debug: true } });
  t.deepEqual(await readDefaultsLayer(join(dir, 'none.json')), {});
  writeFileSync(a, '{ not json');
  await t.throwsAsync(readDefaultsLayer(a), { message: /is not valid JSON/ });
  writeFileSync(a, JSON.stringify({ advanced_settings: { nope: 1 } }));
  await t.throwsAsync(readDefaultsLayer(a), { message: /a\.json:agent\.advanced_settings: unknown field\(s\) nope/ });
});

test('the agent program layers the manufacturer defaults file under the config file', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  writeFileSync(box.defaults, JSON.stringify({ advanced_settings: { platform_server_env: { FOO: 'from-defaults', BAR: 'from-defaults' } } }));
  box.writeConfig({
    agent: { version_control: { 'platform-server': pathToFileURL(runtime).href }, advanced_settings: { platform_server_env: { BAR: 'from-config' } } },
  });
  const agent = new AgentProgram(['--dev-mode', '-c', box.config, '--defaults', box.defaults], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  const [start] = readRuntimeLog(box.log);
  t.is(start.foo, 'from-defaults');
  t.is(start.bar, 'from-config');
});

test('a broken defaults file is reported and ignored', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  writeFileSync(box.defaults, JSON.stringify({ advanced_settings: { platform_server_start_timeout_minutes: 0 } }));
  box.writeConfig({ agent: { version_control: { 'platform-server': pathToFileURL(runtime).href } } });
  const agent = new AgentProgram(['--dev-mode', '-c', box.config, '--defaults', box.defaults], box.env);
  t.teardown(() => agent.stop());
  const err = await agent.waitFor('ignoring the manufacturer defaults file');
  t.regex(String(err.err), /platform_server_start_timeout_minutes 0: must be at least 1/);
  await agent.waitFor('platform-server is serving');
});

test('an invalid saved config is reported with field and rule, and the running config stays', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const good = { agent: { version_control: { 'platform-server': pathToFileURL(runtime).href }, advanced_settings: { platform_server_env: { BAR: 'one' } } } };
  box.writeConfig(good);
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  box.writeConfig({ agent: { ...good.agent, advanced_settings: { platform_server_env: { BAR: 2 } } } });
  const invalid = await agent.waitFor('invalid agent config; keeping the previous one');
  t.regex(String(invalid.err), /machine\.json:agent\.advanced_settings\.platform_server_env\.BAR 2: environment variable values must be strings/);
  writeFileSync(box.config, '{ "agent": ');
  const broken = await agent.waitFor('update check failed; keeping the current config');
  t.regex(String(broken.err), /JSON/);
  t.is(agent.count('restarting platform-server'), 0);
  t.is(agent.child.exitCode, null, 'the agent keeps running');
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => e.kind),
    ['start'],
  );
});
