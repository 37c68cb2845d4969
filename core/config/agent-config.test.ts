import test from 'ava';
import { parseAgentConfig, agentConfigSchema, DEFAULT_HOTSPOT_PASSWORD } from './agent-config.js';
import { ConfigError } from '../../plugins/validation.js';

function failure(input: unknown): ConfigError {
  const err = (() => {
    try {
      parseAgentConfig(input);
    } catch (e) {
      return e;
    }
    throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
  })();
  if (!(err instanceof ConfigError)) throw err;
  return err;
}

test('an absent agent object gets every default of SPEC.md', (t) => {
  const cfg = parseAgentConfig(undefined);
  t.deepEqual(cfg.version_control, { agent: 'stable', 'platform-server': 'stable' });
  t.deepEqual(cfg.advanced_settings, {
    debug: false,
    disable_network_configuration: false,
    disable_system_configuration: false,
    disable_platform_server: false,
    platform_server_env: {},
    platform_server_start_timeout_minutes: 10,
    wait_for_update_check: false,
  });
  t.deepEqual(cfg.network_configuration, {
    device_reboot_after_offline_minutes: 0,
    disable_captive_portal_redirect: false,
    hotspot_password: DEFAULT_HOTSPOT_PASSWORD,
    hotspot_prefix: 'platform-setup',
    manufacturer: 'platform',
    model: 'custom',
    offline_before_starting_hotspot_minutes: 2,
    retry_connection_timeout_minutes: 10,
    turn_on_hotspot_if_wifi_has_no_internet: false,
    user_idle_minutes: 5,
  });
  t.is(cfg.network_configuration.wifi_power_save, undefined);
  t.is(cfg.network_configuration.fragment_id, undefined);
  t.is(cfg.network_configuration.hotspot_interface, undefined);
  t.deepEqual(cfg.additional_networks, {});
  t.deepEqual(cfg.system_configuration, {
    forward_system_logs: '',
    logging_journald_runtime_max_use_megabytes: 512,
    logging_journald_system_max_use_megabytes: 512,
    os_auto_upgrade_type: '',
  });
});

test('empty sections get their defaults and given values are kept', (t) => {
  const cfg = parseAgentConfig({
    version_control: { 'platform-server': '0.2.1' },
    advanced_settings: { platform_server_env: { FOO: 'bar' }, platform_server_start_timeout_minutes: 3 },
    network_configuration: {},
    system_configuration: { os_auto_upgrade_type: 'security' },
  });
  t.is(cfg.version_control.agent, 'stable');
  t.is(cfg.version_control['platform-server'], '0.2.1');
  t.deepEqual(cfg.advanced_settings.platform_server_env, { FOO: 'bar' });
  t.is(cfg.advanced_settings.platform_server_start_timeout_minutes, 3);
  t.false(cfg.advanced_settings.wait_for_update_check);
  t.is(cfg.network_configuration.hotspot_prefix, 'platform-setup');
  t.is(cfg.system_configuration.os_auto_upgrade_type, 'security');
  t.is(cfg.system_configuration.logging_journald_system_max_use_megabytes, 512);
});

test('an additional network gets its defaults', (t) => {
  const cfg = parseAgentConfig({ additional_networks: { lab: { type: 'wifi', ssid: 'lab' }, cable: { type: 'wired' } } });
  t.deepEqual(cfg.additional_networks.cable, {
    type: 'wired',
    interface: '',
    ssid: '',
    psk: '',
    priority: 0,
    ipv4_address: 'auto',
    ipv4_gateway: '',
    ipv4_dns: [],
    ipv4_route_metric: 0,
  });
  t.is(cfg.additional_networks.lab.ssid, 'lab');
});

test('version_control accepts stable, dev, semver, ranges, http(s) and file URLs', (t) => {
  for (const v of [
    'stable',
    'dev',
    '0.2.1',
    'v1.0.0-rc.1',
    '^0.2.0',
    'https://example.com/platform-server',
    'http://10.0.0.1:8000/bin',
    'file:///opt/custom/platform-server',
    'file:///C:/custom/platform-server.exe',
    'file://C:\\custom\\platform-server.exe',
  ]) {
    t.is(parseAgentConfig({ version_control: { 'platform-server': v, agent: v } }).version_control['platform-server'], v);
  }
});

test('version_control rejects other forms, naming the field and the accepted forms', (t) => {
  for (const v of ['latest', '', 'ftp://host/x', 'file:relative', 'file:///', 'http://']) {
    const err = failure({ version_control: { 'platform-server': v } });
    t.is(err.path, 'agent.version_control.platform-server', v);
  }
  t.regex(failure({ version_control: { agent: 'latest' } }).message, /agent\.version_control\.agent "latest": must be "stable", "dev", a semantic version/);
  t.is(failure({ version_control: { agent: 3 } }).rule, 'must be a string');
});

test('unknown keys are rejected at every level', (t) => {
  t.is(failure({ bogus: 1 }).message, 'agent: unknown field(s) bogus');
  t.is(failure({ version_control: { runtime: 'x' } }).path, 'agent.version_control');
  t.is(failure({ advanced_settings: { debg: true } }).rule, 'unknown field(s) debg');
  t.is(failure({ network_configuration: { hotspot: 'x' } }).path, 'agent.network_configuration');
  t.is(failure({ system_configuration: { journald: 1 } }).path, 'agent.system_configuration');
  t.is(failure({ additional_networks: { a: { type: 'wired', mtu: 1500 } } }).path, 'agent.additional_networks.a');
});

test('platform_server_start_timeout_minutes is a whole number of at least 1', (t) => {
  t.is(failure({ advanced_settings: { platform_server_start_timeout_minutes: 0 } }).rule, 'must be at least 1');
  t.is(failure({ advanced_settings: { platform_server_start_timeout_minutes: 1.5 } }).rule, 'must be an integer');
  t.is(failure({ advanced_settings: { platform_server_start_timeout_minutes: '10' } }).rule, 'must be an integer');
  t.is(parseAgentConfig({ advanced_settings: { platform_server_start_timeout_minutes: 1 } }).advanced_settings.platform_server_start_timeout_minutes, 1);
});

test('platform_server_env must map strings to strings', (t) => {
  const err = failure({ advanced_settings: { platform_server_env: { A: 1 } } });
  t.is(err.path, 'agent.advanced_settings.platform_server_env.A');
  t.is(err.rule, 'environment variable values must be strings');
  t.is(failure({ advanced_settings: { platform_server_env: ['A=1'] } }).rule, 'must be an object of string to string');
  t.regex(failure({ advanced_settings: { platform_server_env: { 'A=B': 'x' } } }).rule, /must not contain "="/);
  t.regex(failure({ advanced_settings: { platform_server_env: { '': 'x' } } }).rule, /must not be empty/);
});

test('booleans must be booleans', (t) => {
  for (const key of ['debug', 'disable_network_configuration', 'disable_system_configuration', 'disable_platform_server', 'wait_for_update_check']) {
    const err = failure({ advanced_settings: { [key]: 'true' } });
    t.is(err.path, `agent.advanced_settings.${key}`);
    t.is(err.rule, 'must be true or false');
  }
  t.is(failure({ network_configuration: { wifi_power_save: 1 } }).rule, 'must be true or false');
});

test('network timers are non-negative whole minutes', (t) => {
  for (const key of ['device_reboot_after_offline_minutes', 'offline_before_starting_hotspot_minutes', 'user_idle_minutes']) {
    t.is(failure({ network_configuration: { [key]: -1 } }).rule, 'must be at least 0', key);
  }
  t.is(failure({ network_configuration: { retry_connection_timeout_minutes: 0 } }).rule, 'must be at least 1');
  t.is(failure({ network_configuration: { user_idle_minutes: 2.5 } }).rule, 'must be an integer');
});

test('hotspot_password must be a WPA2 passphrase', (t) => {
  t.regex(failure({ network_configuration: { hotspot_password: 'short' } }).rule, /8 to 63/);
  t.regex(failure({ network_configuration: { hotspot_password: 'x'.repeat(64) } }).rule, /8 to 63/);
});

test('a wifi network needs an SSID of at most 32 bytes and a WPA2-sized psk', (t) => {
  const wifi = (ssid: string, psk = '') => ({ additional_networks: { n: { type: 'wifi', ssid, psk } } });
  t.is(parseAgentConfig(wifi('x'.repeat(32))).additional_networks.n.ssid.length, 32);
  const long = failure(wifi('x'.repeat(33)));
  t.is(long.path, 'agent.additional_networks.n.ssid');
  t.is(long.rule, 'must be at most 32 bytes (is 33)');
  t.is(failure(wifi('é'.repeat(17))).rule, 'must be at most 32 bytes (is 34)', 'bytes, not characters');
  t.is(failure(wifi('')).rule, 'is required for a wifi network');
  t.is(failure(wifi('lab', 'short')).path, 'agent.additional_networks.n.psk');
});

test('network priority is within -999..999', (t) => {
  const net = (priority: unknown) => ({ additional_networks: { n: { type: 'wired', priority } } });
  t.is(parseAgentConfig(net(-999)).additional_networks.n.priority, -999);
  t.is(parseAgentConfig(net(999)).additional_networks.n.priority, 999);
  t.is(failure(net(1000)).rule, 'must be between -999 and 999');
  t.is(failure(net(-1000)).path, 'agent.additional_networks.n.priority');
  t.is(failure(net(1.5)).rule, 'must be an integer');
});

test('a network needs type wifi or wired', (t) => {
  t.is(failure({ additional_networks: { n: {} } }).rule, 'is required and must be "wifi" or "wired"');
  t.is(failure({ additional_networks: { n: { type: 'lte' } } }).path, 'agent.additional_networks.n.type');
  t.is(failure({ additional_networks: { n: { type: 'wired', ssid: 'x' } } }).rule, 'applies to wifi networks only');
});

test('ipv4 fields take CIDR, auto and addresses', (t) => {
  const net = (extra: object) => ({ additional_networks: { n: { type: 'wired', ...extra } } });
  t.is(parseAgentConfig(net({ ipv4_address: '192.168.1.5/24' })).additional_networks.n.ipv4_address, '192.168.1.5/24');
  t.is(parseAgentConfig(net({ ipv4_address: 'auto' })).additional_networks.n.ipv4_address, 'auto');
  for (const bad of ['192.168.1.5', '192.168.1.5/33', '300.1.1.1/24', 'dhcp']) {
    t.regex(failure(net({ ipv4_address: bad })).rule, /CIDR/, bad);
  }
  t.is(failure(net({ ipv4_gateway: 'router' })).rule, 'must be empty or an IPv4 address');
  t.is(parseAgentConfig(net({ ipv4_dns: ['1.1.1.1', '8.8.8.8'] })).additional_networks.n.ipv4_dns.length, 2);
  t.is(failure(net({ ipv4_dns: ['dns.local'] })).path, 'agent.additional_networks.n.ipv4_dns[0]');
  t.is(failure(net({ ipv4_route_metric: -1 })).path, 'agent.additional_networks.n.ipv4_route_metric');
});

test('journald limits are -1 or at least 0', (t) => {
  for (const key of ['logging_journald_runtime_max_use_megabytes', 'logging_journald_system_max_use_megabytes']) {
    t.is(parseAgentConfig({ system_configuration: { [key]: -1 } }).system_configuration[key as 'logging_journald_runtime_max_use_megabytes'], -1);
    t.is(parseAgentConfig({ system_configuration: { [key]: 0 } }).system_configuration[key as 'logging_journald_runtime_max_use_megabytes'], 0);
    t.is(failure({ system_configuration: { [key]: -2 } }).rule, 'must be -1 (disabled) or at least 0');
  }
});

test('os_auto_upgrade_type is all, security, disable or empty', (t) => {
  for (const v of ['', 'all', 'security', 'disable'] as const) {
    t.is(parseAgentConfig({ system_configuration: { os_auto_upgrade_type: v } }).system_configuration.os_auto_upgrade_type, v);
  }
  t.is(failure({ system_configuration: { os_auto_upgrade_type: 'none' } }).rule, 'must be "all", "security", "disable" or empty');
});

test('forward_system_logs is a comma-separated identifier list', (t) => {
  for (const v of ['', 'all', 'sshd,-kernel', 'NetworkManager, -systemd-journald']) {
    t.is(parseAgentConfig({ system_configuration: { forward_system_logs: v } }).system_configuration.forward_system_logs, v);
  }
  t.is(failure({ system_configuration: { forward_system_logs: 'a,,b' } }).path, 'agent.system_configuration.forward_system_logs');
  t.is(failure({ system_configuration: { forward_system_logs: '--x' } }).path, 'agent.system_configuration.forward_system_logs');
});

test('the agent object itself must be an object, and errors follow the base path', (t) => {
  t.is(failure(5).rule, 'must be an object');
  const err = (() => {
    try {
      parseAgentConfig({ advanced_settings: { debug: 1 } }, 'config.agent');
    } catch (e) {
      return e as ConfigError;
    }
    return undefined;
  })();
  t.is(err?.path, 'config.agent.advanced_settings.debug');
});

test('all errors are attached to the first', (t) => {
  const err = failure({ advanced_settings: { debug: 1, wait_for_update_check: 2 } }) as ConfigError & { all: ConfigError[] };
  t.is(err.all.length, 2);
});

test('the schema is usable directly', (t) => {
  t.true(agentConfigSchema.safeParse({}).success);
  t.false(agentConfigSchema.safeParse({ x: 1 }).success);
});
