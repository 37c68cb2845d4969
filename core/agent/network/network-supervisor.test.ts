// The network state machine with the in-memory backend and a fake clock: the hotspot after the offline
// timer, networks tried by priority, the retry and user-idle timers, the offline reboot, and
// disable_network_configuration.
import test from 'ava';
import { Logger } from '../agent-log.js';
import { parseAgentConfig, type AgentConfigInput } from '../../config/agent-config.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeNetworkBackend } from '../testing/fake-network.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { NETWORK_CHECK_SECONDS, NetworkSupervisor } from './network-supervisor.js';
import { HOTSPOT_ID, NetworkInputError, clientProfileOf, hotspotProfileOf } from './profiles.js';

const MIN = 60_000;

async function setup(agent: AgentConfigInput, prepare: (b: FakeNetworkBackend) => void = () => {}) {
  const backend = new FakeNetworkBackend();
  prepare(backend);
  const clock = new FakeClock();
  const runner = new FakeRunner();
  const logs: Record<string, unknown>[] = [];
  const logger = new Logger('debug', {}, (l) => logs.push(JSON.parse(l) as Record<string, unknown>));
  const sup = new NetworkSupervisor({ backend, clock, runner, logger, minutes: (n) => n * MIN, checkIntervalMs: NETWORK_CHECK_SECONDS * 1000 });
  const skipped = await sup.configure(parseAgentConfig(agent));
  sup.start();
  await clock.advance(0);
  return { backend, clock, runner, sup, logs, skipped, activations: () => backend.ops.filter((o) => o.startsWith('activate')) };
}

test('offline longer than offline_before_starting_hotspot_minutes starts exactly this hotspot profile', async (t) => {
  const { backend, clock, sup } = await setup({ network_configuration: { hotspot_password: 'secret-pass', offline_before_starting_hotspot_minutes: 3 } });
  t.is(sup.state, 'offline');
  await clock.advance(2.5 * MIN);
  t.is(sup.state, 'offline');
  t.false(backend.store.has(HOTSPOT_ID));
  await clock.advance(0.5 * MIN);
  t.is(sup.state, 'provisioning');
  t.deepEqual(backend.store.get(HOTSPOT_ID), {
    kind: 'hotspot',
    id: 'platform-hotspot',
    interface: '',
    ssid: 'platform-setup-robot1',
    psk: 'secret-pass',
    ipv4: { method: 'shared', address: '10.42.0.1/24' },
    ipv6: 'disabled',
    autoconnect: false,
  });
  t.is(backend.active, HOTSPOT_ID);
});

test('additional_networks become profiles with their priority; a removed key removes its profile', async (t) => {
  const { backend, sup } = await setup({
    additional_networks: {
      lab: { type: 'wifi', ssid: 'lab', psk: 'lab-password', priority: 7 },
      desk: { type: 'wired', priority: -3, ipv4_address: '192.168.5.9/24', ipv4_gateway: '192.168.5.1', ipv4_dns: ['1.1.1.1'] },
    },
  });
  const lab = backend.store.get('platform-net-lab');
  t.like(lab, { kind: 'client', type: 'wifi', ssid: 'lab', psk: 'lab-password', priority: 7, ipv4: { method: 'auto' } });
  t.deepEqual(backend.store.get('platform-net-desk')?.ipv4, { method: 'manual', address: '192.168.5.9/24', gateway: '192.168.5.1', dns: ['1.1.1.1'] });
  await sup.configure(parseAgentConfig({ additional_networks: { lab: { type: 'wifi', ssid: 'lab', psk: 'lab-password', priority: 7 } } }));
  t.false(backend.store.has('platform-net-desk'));
  t.true(backend.store.has('platform-net-lab'));
});

test('with turn_on_hotspot_if_wifi_has_no_internet, every network is tried from the highest priority to the lowest, then the hotspot starts', async (t) => {
  const { clock, sup, activations } = await setup(
    {
      network_configuration: { offline_before_starting_hotspot_minutes: 2, turn_on_hotspot_if_wifi_has_no_internet: true },
      additional_networks: {
        low: { type: 'wifi', ssid: 'low', psk: 'wrong-pass', priority: -5 },
        high: { type: 'wifi', ssid: 'high', psk: 'wrong-pass', priority: 900 },
        away: { type: 'wifi', ssid: 'away', psk: 'any-password', priority: 999 },
        cable: { type: 'wired', priority: 10 },
      },
    },
    (b) => {
      b.addAir({ ssid: 'low', psk: 'right-pass', signal: 90 });
      b.addAir({ ssid: 'high', psk: 'right-pass', signal: 20 });
    },
  );
  await clock.advance(2 * MIN);
  t.deepEqual(activations(), ['activate platform-net-high', 'activate platform-net-cable', 'activate platform-net-low', `activate ${HOTSPOT_ID}`]);
  t.is(sup.state, 'provisioning');
  t.true(sup.errors.includes('high: secrets were required, but not provided'));
});

test('without turn_on_hotspot_if_wifi_has_no_internet (the default), only the highest-priority network in reach is tried, then the hotspot starts', async (t) => {
  const { clock, sup, activations } = await setup(
    {
      network_configuration: { offline_before_starting_hotspot_minutes: 2, retry_connection_timeout_minutes: 10 },
      additional_networks: {
        low: { type: 'wifi', ssid: 'low', psk: 'right-pass', priority: -5 },
        high: { type: 'wifi', ssid: 'high', psk: 'wrong-pass', priority: 900 },
        away: { type: 'wifi', ssid: 'away', psk: 'any-password', priority: 999 },
      },
    },
    (b) => {
      b.addAir({ ssid: 'low', psk: 'right-pass', signal: 90 });
      b.addAir({ ssid: 'high', psk: 'right-pass', signal: 20 });
    },
  );
  await clock.advance(2 * MIN);
  // `low` would connect, but SPEC.md says only the highest-priority network is tried.
  t.deepEqual(activations(), ['activate platform-net-high', `activate ${HOTSPOT_ID}`]);
  t.is(sup.state, 'provisioning');
  // After the retry timer, a new round tries the same one network again.
  await clock.advance(10 * MIN + NETWORK_CHECK_SECONDS * 1000);
  t.deepEqual(activations().slice(2, 3), ['activate platform-net-high']);
});

test('a network that connects ends the search, and the machine is online', async (t) => {
  const { backend, clock, sup, activations } = await setup(
    { additional_networks: { a: { type: 'wifi', ssid: 'a', psk: 'good-pass', priority: 5 }, b: { type: 'wifi', ssid: 'b', psk: 'good-pass', priority: 1 } } },
    (b) => {
      b.addAir({ ssid: 'a', psk: 'good-pass' });
      b.addAir({ ssid: 'b', psk: 'good-pass' });
    },
  );
  await clock.advance(10 * MIN);
  t.deepEqual(activations(), ['activate platform-net-a']);
  t.is(sup.state, 'online');
  backend.dropConnection();
  await clock.advance(NETWORK_CHECK_SECONDS * 1000);
  t.is(sup.state, 'offline');
  t.deepEqual(activations(), ['activate platform-net-a', 'activate platform-net-a'], 'a new offline spell tries again from the top');
});

test('provisioning ends after retry_connection_timeout_minutes unless a user was active, and restarts if still offline', async (t) => {
  const { backend, clock, sup } = await setup({
    network_configuration: { offline_before_starting_hotspot_minutes: 0, retry_connection_timeout_minutes: 10, user_idle_minutes: 5 },
  });
  await clock.advance(15_000);
  t.is(sup.state, 'provisioning');
  const started = clock.now();
  await clock.advance(8 * MIN);
  sup.userActivity(); // someone opens the portal at minute 8
  await clock.advance(2.5 * MIN); // minute 10.5: retry timer elapsed, but the user is active
  t.is(sup.state, 'provisioning');
  await clock.advance(2.25 * MIN); // minute 12.75: still within 5 idle minutes
  t.is(sup.state, 'provisioning');
  const deactivations = () => backend.ops.filter((o) => o === `deactivate ${HOTSPOT_ID}`).length;
  t.is(deactivations(), 0);
  await clock.advance(0.5 * MIN); // minute 13.25: idle for 5.25 minutes
  t.is(deactivations(), 1, 'provisioning left so other connections can be tried');
  await clock.advance(NETWORK_CHECK_SECONDS * 1000);
  t.is(sup.state, 'provisioning', 'no connection came: the hotspot starts again');
  t.true(clock.now() - started < 14 * MIN);
});

test('a wired link coming up during provisioning stops the hotspot', async (t) => {
  const { backend, clock, sup } = await setup({
    network_configuration: { offline_before_starting_hotspot_minutes: 1 },
    additional_networks: { cable: { type: 'wired' } },
  });
  await clock.advance(2 * MIN);
  t.is(sup.state, 'provisioning');
  backend.wiredInternet = true;
  backend.active = 'platform-net-cable'; // NetworkManager's autoconnect brings the cable up on its own
  await clock.advance(NETWORK_CHECK_SECONDS * 1000);
  t.is(sup.state, 'online');
  t.true(backend.ops.includes(`deactivate ${HOTSPOT_ID}`));
});

test('a network submitted during provisioning is saved, the hotspot stops and the network is joined', async (t) => {
  const { backend, clock, sup } = await setup({ network_configuration: { offline_before_starting_hotspot_minutes: 0 } }, (b) =>
    b.addAir({ ssid: 'home', psk: 'home-password' }),
  );
  await clock.advance(15_000);
  t.is(sup.state, 'provisioning');
  const tooLong = await t.throwsAsync(() => sup.submitNetwork('x'.repeat(33), 'home-password'), {
    instanceOf: NetworkInputError,
    message: 'ssid: must be at most 32 bytes (is 33)',
  });
  t.is(tooLong?.errorCode, 'CORE_ERR_NETWORK_INPUT');
  t.is(tooLong?.field, 'ssid');
  await t.throwsAsync(() => sup.submitNetwork('home', 'home-password', 1000), { message: 'priority: must be an integer between -999 and 999 (is 1000)' });
  t.is(sup.state, 'provisioning', 'bad input changes nothing');
  await sup.submitNetwork('home', 'home-password', 50);
  t.like(backend.store.get('platform-user-home'), { ssid: 'home', psk: 'home-password', priority: 50 });
  t.is(backend.active, 'platform-user-home');
  await clock.advance(NETWORK_CHECK_SECONDS * 1000);
  t.is(sup.state, 'online');
});

test('the machine reboots once after device_reboot_after_offline_minutes, and never with 0', async (t) => {
  const on = await setup({ network_configuration: { device_reboot_after_offline_minutes: 30 } });
  await on.clock.advance(29.5 * MIN);
  t.deepEqual(on.runner.calls, []);
  await on.clock.advance(60 * MIN);
  t.deepEqual(on.runner.calls, ['systemctl reboot'], 'once per offline spell');
  const off = await setup({ network_configuration: { device_reboot_after_offline_minutes: 0 } });
  await off.clock.advance(24 * 60 * MIN);
  t.deepEqual(off.runner.calls, []);
});

test('limited connectivity is online unless turn_on_hotspot_if_wifi_has_no_internet', async (t) => {
  const lan = (turn: boolean) =>
    setup(
      {
        network_configuration: { turn_on_hotspot_if_wifi_has_no_internet: turn, offline_before_starting_hotspot_minutes: 1 },
        additional_networks: { lan: { type: 'wifi', ssid: 'lan', psk: 'lan-password' } },
      },
      (b) => b.addAir({ ssid: 'lan', psk: 'lan-password', internet: false }),
    );
  const keep = await lan(false);
  await keep.clock.advance(5 * MIN);
  t.is(keep.sup.state, 'online');
  const hot = await lan(true);
  await hot.clock.advance(5 * MIN);
  t.is(hot.sup.state, 'provisioning');
});

test('disable_network_configuration: no profiles, no hotspot; setting it stops the hotspot', async (t) => {
  const off = await setup({ advanced_settings: { disable_network_configuration: true }, additional_networks: { cable: { type: 'wired' } } });
  await off.clock.advance(60 * MIN);
  t.deepEqual(off.backend.ops, []);
  t.is(off.sup.state, 'disabled');
  const on = await setup({ network_configuration: { offline_before_starting_hotspot_minutes: 0 } });
  await on.clock.advance(15_000);
  t.is(on.sup.state, 'provisioning');
  await on.sup.configure(parseAgentConfig({ advanced_settings: { disable_network_configuration: true } }));
  t.is(on.sup.state, 'disabled');
  t.is(on.backend.active, undefined);
});

test('profile input rules name the field: priority range, SSID bytes; the hotspot SSID is cut to 32 bytes', (t) => {
  const net = (over: Record<string, unknown>) => ({ ...parseAgentConfig({ additional_networks: { n: { type: 'wired' } } }).additional_networks.n, ...over });
  t.throws(() => clientProfileOf('n', net({ priority: 1000 })), {
    message: 'additional_networks.n.priority: must be an integer between -999 and 999 (is 1000)',
  });
  t.throws(() => clientProfileOf('n', net({ type: 'wifi', ssid: 'ü'.repeat(17) })), {
    message: 'additional_networks.n.ssid: must be at most 32 bytes (is 34)',
  });
  const hotspot = hotspotProfileOf(parseAgentConfig({}).network_configuration, 'a-very-long-hostname-for-this-robot');
  t.is(hotspot.ssid, 'platform-setup-a-very-long-hostn');
  t.is(Buffer.byteLength(hotspot.ssid), 32);
});
