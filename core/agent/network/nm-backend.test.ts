// The NetworkManager backend against NetworkManager's D-Bus API as python3-dbusmock serves it: the
// exact settings of the hotspot after the offline timer, client profiles with their priority and
// manual addresses, the scan, connectivity, activation and deactivation.
import test from 'ava';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { startNmMock } from '../testing/nm-mock.js';
import { NetworkSupervisor } from './network-supervisor.js';
import { NetworkManagerBackend, securityOf } from './nm-backend.js';
import { clientProfileOf } from './profiles.js';

const NM = 'org.freedesktop.NetworkManager';

// D-Bus variants as plain values (an SSID's bytes as text) so a whole settings map compares at once.
function unwrap(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  if (Array.isArray(v)) return v.map(unwrap);
  if (v && typeof v === 'object') {
    if ('signature' in v && 'value' in v) return unwrap((v as { value: unknown }).value);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unwrap(x)]));
  }
  return v;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const nm = await startNmMock();
  t.teardown(() => nm.stop());
  const backend = new NetworkManagerBackend({ bus: nm.bus, activationTimeoutMs: 5000 });
  const settingsOf = async (id: string) => {
    const settings = (await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager/Settings')).getInterface(`${NM}.Settings`);
    for (const path of (await settings.ListConnections()) as string[]) {
      const raw = (await (await nm.bus.getProxyObject(NM, path)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as Record<
        string,
        Record<string, { value: unknown }>
      >;
      if (raw.connection.id.value === id) return raw;
    }
    return undefined;
  };
  return { nm, backend, settingsOf };
}

test.serial('after the offline timer the hotspot connection has exactly the reference settings', async (t) => {
  const { nm, backend, settingsOf } = await setup(t);
  await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30]);
  await nm.call('SetConnectivity', 'u', [1]); // none
  const clock = new FakeClock();
  const sup = new NetworkSupervisor({
    backend,
    clock,
    runner: new FakeRunner(),
    logger: new Logger('silent'),
    minutes: (n) => n * 60_000,
    checkIntervalMs: 15_000,
  });
  await sup.configure(parseAgentConfig({ network_configuration: { hotspot_password: 'hotspot-pass', hotspot_interface: 'wlan0' } }));
  sup.start();
  for (let i = 0; i < 10 && sup.state !== 'provisioning'; i++) {
    await clock.advance(15_000);
    await sup.step();
  }
  t.is(sup.state, 'provisioning');
  t.true(clock.now() >= 2 * 60_000, 'not before offline_before_starting_hotspot_minutes (2)');
  const s = (await settingsOf('platform-hotspot'))!;
  const plain = Object.fromEntries(
    Object.entries(s).map(([group, kv]) => [
      group,
      Object.fromEntries(
        Object.entries(kv)
          .filter(([k]) => k !== 'uuid')
          .map(([k, v]) => [k, unwrap(v)]),
      ),
    ]),
  );
  t.deepEqual(plain, {
    connection: { id: 'platform-hotspot', type: '802-11-wireless', autoconnect: false, 'autoconnect-priority': 0, 'interface-name': 'wlan0' },
    // powersave 0: wifi_power_save not set, NetworkManager's default applies.
    '802-11-wireless': { ssid: 'platform-setup-hostname', mode: 'ap', powersave: 0 },
    '802-11-wireless-security': { 'key-mgmt': 'wpa-psk', psk: 'hotspot-pass' },
    ipv4: { method: 'shared', 'address-data': [{ address: '10.42.0.1', prefix: 24 }] },
    ipv6: { method: 'disabled' },
  });
  const active = (await (
    await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager')
  )
    .getInterface('org.freedesktop.DBus.Properties')
    .Get(NM, 'ActiveConnections')) as {
    value: string[];
  };
  t.is(active.value.length, 1, 'the hotspot is active');
  await sup.stop();
  const after = (await (
    await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager')
  )
    .getInterface('org.freedesktop.DBus.Properties')
    .Get(NM, 'ActiveConnections')) as {
    value: string[];
  };
  t.deepEqual(after.value, [], 'stopping deactivates it');
});

test.serial('client profiles round-trip with priority, manual address, DNS and route metric; an update replaces in place', async (t) => {
  const { backend } = await setup(t);
  const cfg = parseAgentConfig({
    additional_networks: {
      lab: {
        type: 'wifi',
        ssid: 'lab',
        psk: 'lab-password',
        priority: 42,
        ipv4_address: '192.168.7.20/24',
        ipv4_gateway: '192.168.7.1',
        ipv4_dns: ['9.9.9.9', '1.1.1.1'],
        ipv4_route_metric: 300,
      },
      desk: { type: 'wired', priority: -7 },
    },
  });
  const lab = clientProfileOf('lab', cfg.additional_networks.lab);
  const desk = clientProfileOf('desk', cfg.additional_networks.desk);
  await backend.upsertProfile(lab);
  await backend.upsertProfile(desk);
  t.deepEqual(
    (await backend.profiles()).sort((a, b) => a.id.localeCompare(b.id)),
    [desk, lab],
  );
  await backend.upsertProfile({ ...lab, priority: 5 });
  const after = await backend.profiles();
  t.is(after.length, 2, 'updated, not added twice');
  t.like(
    after.find((p) => p.id === lab.id),
    { priority: 5 },
  );
  await backend.removeProfile(desk.id);
  t.deepEqual(
    (await backend.profiles()).map((p) => p.id),
    [lab.id],
  );
});

test.serial('scan, connectivity, activation and the hostname', async (t) => {
  const { nm, backend } = await setup(t);
  const dev = (await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30])) as string;
  await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, 'ap1', 'home', '00:11:22:33:44:01', 2, 2437, 54000, 40, 0x100 | 0x8 | 0x2]);
  await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, 'ap2', 'home', '00:11:22:33:44:02', 2, 5180, 54000, 80, 0x100 | 0x8 | 0x2]);
  await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, 'ap3', 'cafe', '00:11:22:33:44:03', 2, 2412, 54000, 60, 0]);
  const nets = (await backend.scan()).sort((a, b) => b.signal - a.signal);
  t.deepEqual(nets, [
    { ssid: 'home', security: 'wpa-psk', signal: 80, connected: false },
    { ssid: 'cafe', security: 'open', signal: 60, connected: false },
  ]);
  for (const [state, name] of [
    [1, 'none'],
    [2, 'portal'],
    [3, 'limited'],
    [4, 'full'],
  ] as const) {
    await nm.call('SetConnectivity', 'u', [state]);
    t.is(await backend.connectivity(), name);
  }
  // Connectivity checking off (unknown): NetworkManager's global state decides.
  await nm.call('SetConnectivity', 'u', [0]);
  await nm.call('SetGlobalConnectionState', 'u', [70]);
  t.is(await backend.connectivity(), 'full');
  await nm.call('SetGlobalConnectionState', 'u', [60]);
  t.is(await backend.connectivity(), 'limited');
  await nm.call('SetGlobalConnectionState', 'u', [20]);
  t.is(await backend.connectivity(), 'none');
  t.is(await backend.hostname(), 'hostname');
  t.deepEqual(await backend.activate('platform-net-missing'), { ok: false, error: 'no connection profile platform-net-missing' });
  t.is(securityOf(1, 0, 0x400), 'sae');
  t.is(securityOf(1, 0, 0x200), 'wpa-eap');
  t.is(securityOf(1, 0, 0), 'wep');
});
