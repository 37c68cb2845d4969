import test from 'ava';
import { agentCommand, parseAgentArgs } from './cli.js';
import { agentPaths } from './paths.js';
import { TimeScale } from './time-scale.js';
import { credentialsFromEnv, machineSourceOf } from './credentials.js';
import { CredentialsError } from './errors.js';

const quiet = () =>
  agentCommand()
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });

test('flags of SPEC.md', (t) => {
  const o = parseAgentArgs(['-c', '/x.json', '--defaults', '/d.json', '-d', '-w', '--dev-mode'], {}, quiet());
  t.deepEqual(o, {
    config: '/x.json',
    defaults: '/d.json',
    debug: true,
    wait: true,
    install: false,
    devMode: true,
    fastStart: false,
    allowInsecureCreds: false,
  });
  t.deepEqual(parseAgentArgs(['--config', '/y.json', '--debug', '--wait', '--install'], {}, quiet()).config, '/y.json');
  t.true(parseAgentArgs(['--install'], {}, quiet()).install);
});

test('environment variables set the same things', (t) => {
  const o = parseAgentArgs(
    [],
    { PLATFORM_AGENT_DEBUG: '1', PLATFORM_AGENT_WAIT_FOR_UPDATE: 'true', PLATFORM_AGENT_DEVMODE: 'yes', PLATFORM_AGENT_FAST_START: '1' },
    quiet(),
  );
  t.true(o.debug && o.wait && o.devMode && o.fastStart);
  const off = parseAgentArgs([], { PLATFORM_AGENT_DEBUG: '0', PLATFORM_AGENT_FAST_START: 'true' }, quiet());
  t.false(off.debug);
  t.false(off.fastStart, 'fast start is PLATFORM_AGENT_FAST_START=1 exactly');
});

test('unknown options are errors', (t) => {
  t.throws(() => parseAgentArgs(['--bogus'], {}, quiet()), { message: /unknown option '--bogus'/ });
});

test('help lists every option', (t) => {
  const help = agentCommand().helpInformation();
  for (const flag of ['-c, --config', '--defaults', '-d, --debug', '-w, --wait', '-h, --help', '--install', '--dev-mode']) t.true(help.includes(flag), flag);
});

test('default paths: system and dev mode', (t) => {
  const sys = agentPaths({ devMode: false, env: {} });
  t.is(sys.configFile, '/etc/platform.json');
  t.is(sys.defaultsFile, '/etc/platform-defaults.json');
  t.is(sys.root, '/opt/platform');
  t.is(sys.systemdDir, '/etc/systemd/system');
  t.is(sys.systemRoot, '', 'system_configuration writes the real /etc on a machine');
  t.is(agentPaths({ devMode: false, installRoot: '/tmp/r', env: {} }).systemRoot, '/tmp/r');
  t.is(agentPaths({ devMode: true, env: { PLATFORM_AGENT_HOME: '/tmp/dev' } }).systemRoot, '/tmp/dev/system');
  const dev = agentPaths({ devMode: true, env: { PLATFORM_AGENT_HOME: '/tmp/dev' } });
  for (const p of [dev.configFile, dev.defaultsFile, dev.binDir, dev.cacheDir, dev.stateFile, dev.systemdDir]) t.true(p.startsWith('/tmp/dev/'), p);
  t.is(agentPaths({ devMode: false, config: '/c.json', env: {} }).configFile, '/c.json');
  const win = agentPaths({ devMode: false, env: {}, platform: 'win32' });
  t.is(win.root, 'C:\\opt\\platform');
  t.true(win.configFile.startsWith('C:\\etc'), win.configFile);
});

test('time scale: minutes and seconds shrink by the factor; defaults unchanged', (t) => {
  t.is(new TimeScale().minutes(10), 600_000);
  t.is(new TimeScale(0.001).minutes(10), 600);
  t.is(TimeScale.fromEnv({ PLATFORM_AGENT_TIME_SCALE: '0.5' }).seconds(4), 2000);
  t.is(TimeScale.fromEnv({}).factor, 1);
  t.throws(() => TimeScale.fromEnv({ PLATFORM_AGENT_TIME_SCALE: '0' }), { message: /must be a number above 0/ });
  t.throws(() => TimeScale.fromEnv({ PLATFORM_AGENT_TIME_SCALE: 'fast' }));
});

test('credentials: file shapes and install-time environment', (t) => {
  const online = machineSourceOf('/etc/platform.json', { cloud: { app_address: 'http://h:1', id: 'p', api_key: { id: 'k', key: 's' } } });
  t.deepEqual(online, { mode: 'online', file: '/etc/platform.json', credentials: { appAddress: 'http://h:1', partId: 'p', apiKeyId: 'k', apiKey: 's' } });
  t.is(machineSourceOf('/m.json', { agent: {}, components: [] }).mode, 'offline');
  const bySecret = machineSourceOf('/etc/platform.json', { cloud: { app_address: 'http://h:1', id: 'p', secret: 'shh' } });
  t.deepEqual(bySecret.mode === 'online' && bySecret.credentials, { appAddress: 'http://h:1', partId: 'p', secret: 'shh' });
  t.throws(() => machineSourceOf('/m.json', { cloud: { app_address: 'x', id: 'p' } }), { message: /needs either api_key \{id, key\} or secret/ });
  t.throws(() => machineSourceOf('/m.json', { cloud: { id: 'p', secret: 's' } }), {
    message: /cloud\.app_address: is required for the agent to reach the cloud/,
  });
  t.is(
    t.throws(() => machineSourceOf('/m.json', { components: [] }), { instanceOf: CredentialsError, message: /needs a "cloud" object/ })?.errorCode,
    'CORE_ERR_AGENT_CREDENTIALS',
  );
  t.throws(() => machineSourceOf('/m.json', { cloud: { app_address: 'x', id: 'p', api_key: { id: 'k' } } }), { message: /cloud\.api_key\.key/ });
  t.deepEqual(credentialsFromEnv({ PLATFORM_API_KEY_ID: 'k', PLATFORM_API_KEY: 's', PLATFORM_PART_ID: 'p', PLATFORM_APP_ADDRESS: 'http://c:1' }), {
    appAddress: 'http://c:1',
    partId: 'p',
    apiKeyId: 'k',
    apiKey: 's',
  });
  t.is(credentialsFromEnv({}), undefined);
});
