// Against python3-dbusmock's NetworkManager (testing/nm-mock.ts): NetworkManager's signals reach the
// state machine at once (match rules on the bus, no poll: the fake clock never moves), and
// wifi_power_save goes into the managed Wi-Fi profiles' settings.
import test from 'ava';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { startNmMock, type NmMock } from '../testing/nm-mock.js';
import { eventually } from '../../serving/testing/eventually.js';
import { NetworkSupervisor, type NetworkState } from './network-supervisor.js';
import { NetworkManagerBackend } from './nm-backend.js';

const NM = 'org.freedesktop.NetworkManager';
const CONNECTIVITY_NONE = 1;
const CONNECTIVITY_FULL = 4;

async function setup(t: { teardown(fn: () => Promise<void>): void }, signals: boolean) {
  const nm = await startNmMock();
  t.teardown(() => nm.stop());
  const backend = new NetworkManagerBackend({ bus: nm.bus, activationTimeoutMs: 5000 });
  const states: NetworkState[] = [];
  const clock = new FakeClock();
  const sup = new NetworkSupervisor({
    backend,
    clock,
    runner: new FakeRunner(),
    logger: new Logger('silent'),
    minutes: (n) => n * 60_000,
    checkIntervalMs: 15_000,
    onStateChange: (s) => states.push(s),
    signals,
  });
  t.teardown(() => sup.stop());
  return { nm, backend, sup, states, clock };
}

async function settingsOf(nm: NmMock, id: string): Promise<Record<string, Record<string, { value: unknown }>> | undefined> {
  const settings = (await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager/Settings')).getInterface(`${NM}.Settings`);
  for (const path of (await settings.ListConnections()) as string[]) {
    const raw = (await (await nm.bus.getProxyObject(NM, path)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as Record<
      string,
      Record<string, { value: unknown }>
    >;
    if (raw.connection.id.value === id) return raw;
  }
  return undefined;
}

test.serial('a change of connectivity is acted on at once through NetworkManager signals, with no check on the timer', async (t) => {
  const { nm, sup, states } = await setup(t, true);
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_FULL]);
  await sup.configure(parseAgentConfig({}));
  sup.start();
  // The first check (timer at 0) would need the fake clock to move; it never does in this test.
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_NONE]);
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_FULL]);
  await eventually(
    () => sup.state,
    (s) => s === 'online',
    { what: 'online from the Connectivity signal', timeoutMs: 10_000 },
  );
  // StateChanged alone (connectivity checking off: the global state decides) is followed too.
  await nm.call('SetConnectivity', 'u', [0]);
  await nm.call('SetGlobalConnectionState', 'u', [20]); // disconnected
  await eventually(
    () => sup.state,
    (s) => s === 'offline',
    { what: 'offline from StateChanged', timeoutMs: 10_000 },
  );
  t.deepEqual(states, ['online', 'offline']);
});

test.serial('without signals, the same changes wait for the timer (the control for the test above)', async (t) => {
  const { nm, sup } = await setup(t, false);
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_NONE]);
  await sup.configure(parseAgentConfig({}));
  sup.start();
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_FULL]);
  await nm.call('SetGlobalConnectionState', 'u', [70]);
  // A round trip on the bus after the signals: had they been followed, the check would have run by now.
  await nm.call('SetGlobalConnectionState', 'u', [70]);
  await new Promise((r) => setTimeout(r, 200));
  t.is(sup.state, 'offline', 'nothing checked: the supervisor starts offline and the clock did not move');
  await sup.step();
  t.is(sup.state, 'online');
});

test.serial('wifi_power_save is written as 802-11-wireless.powersave to managed Wi-Fi profiles and the hotspot; unset writes the default (0)', async (t) => {
  const { nm, backend, sup, clock } = await setup(t, false);
  await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30]);
  const networks = { lab: { type: 'wifi', ssid: 'lab', psk: 'lab-password', priority: 3 }, desk: { type: 'wired' } };
  const powersave = async (id: string) => (await settingsOf(nm, id))?.['802-11-wireless']?.powersave?.value;
  await sup.configure(parseAgentConfig({ network_configuration: { wifi_power_save: false }, additional_networks: networks }));
  t.is(await powersave('platform-net-lab'), 2, 'disable');
  t.is((await settingsOf(nm, 'platform-net-desk'))?.['802-11-wireless'], undefined, 'a wired profile has no Wi-Fi settings');
  await sup.configure(parseAgentConfig({ network_configuration: { wifi_power_save: true }, additional_networks: networks }));
  t.is(await powersave('platform-net-lab'), 3, 'enable, updated in place');
  t.is((await backend.profiles()).filter((p) => p.id === 'platform-net-lab').length, 1);
  await sup.submitNetwork('home', 'home-password', 4);
  t.is(await powersave('platform-user-home'), 3, 'a network submitted during provisioning too');
  await sup.configure(parseAgentConfig({ additional_networks: networks }));
  t.is(await powersave('platform-net-lab'), 0, "not set: 0, NetworkManager's default");
  t.false('powerSave' in (await backend.profiles()).find((p) => p.id === 'platform-net-lab')!, 'read back as not set');
  // The hotspot, after the offline timer.
  await nm.call('SetConnectivity', 'u', [CONNECTIVITY_NONE]);
  await sup.configure(parseAgentConfig({ network_configuration: { wifi_power_save: false, hotspot_interface: 'wlan0' } }));
  sup.start();
  // D-Bus calls take real time: each check is awaited (step() queues behind the timer's own).
  for (let i = 0; i < 20 && sup.state !== 'provisioning'; i++) {
    await clock.advance(15_000);
    await sup.step();
  }
  t.is(sup.state, 'provisioning');
  t.is(await powersave('platform-hotspot'), 2);
});
