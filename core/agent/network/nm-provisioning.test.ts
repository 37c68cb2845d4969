// The state machine and the provisioning gRPC service against NetworkManager's D-Bus API as
// python3-dbusmock serves it (its log records every call): networks tried by priority, then the
// hotspot; the retry timer held off by a user; a network sent through gRPC becomes a NetworkManager
// profile with its priority.
import test from 'ava';
import { credentials as grpcCredentials, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { ProvisioningServiceClient, type SetNetworkCredentialsRequest } from '../../../gen/platform/provisioning/v1/provisioning.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { startNmMock } from '../testing/nm-mock.js';
import { NetworkSupervisor } from './network-supervisor.js';
import { NetworkManagerBackend } from './nm-backend.js';
import { ProvisioningService } from './provisioning-service.js';

const NM = 'org.freedesktop.NetworkManager';

test('over D-Bus: networks by priority, the hotspot, the retry timer and a user, a network from gRPC', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nm-provisioning-'));
  const log = join(dir, 'calls.log');
  const nm = await startNmMock(log);
  t.teardown(async () => {
    await nm.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const dev = (await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30])) as string;
  for (const [name, ssid, signal] of [
    ['ap1', 'low', 70],
    ['ap2', 'high', 30],
    ['ap3', 'home', 90],
  ] as const)
    await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, name, ssid, `00:11:22:33:44:0${name.at(-1)}`, 2, 2437, 54000, signal, 0x100 | 0x8]);
  await nm.call('SetConnectivity', 'u', [1]);
  const backend = new NetworkManagerBackend({ bus: nm.bus, activationTimeoutMs: 5000 });
  const clock = new FakeClock();
  const config = parseAgentConfig({
    // Every network is tried in turn only with turn_on_hotspot_if_wifi_has_no_internet (SPEC.md).
    network_configuration: {
      offline_before_starting_hotspot_minutes: 1,
      retry_connection_timeout_minutes: 10,
      user_idle_minutes: 5,
      turn_on_hotspot_if_wifi_has_no_internet: true,
    },
    additional_networks: {
      low: { type: 'wifi', ssid: 'low', psk: 'low-password', priority: 1 },
      high: { type: 'wifi', ssid: 'high', psk: 'high-password', priority: 50 },
      away: { type: 'wifi', ssid: 'away', psk: 'away-password', priority: 99 },
    },
  });
  const sup = new NetworkSupervisor({
    backend,
    clock,
    runner: new FakeRunner(),
    logger: new Logger('silent'),
    minutes: (n) => n * 60_000,
    checkIntervalMs: 15_000,
  });
  await sup.configure(config);
  const pathOf = async () => {
    const settings = (await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager/Settings')).getInterface(`${NM}.Settings`);
    const ids = new Map<string, string>();
    for (const path of (await settings.ListConnections()) as string[]) {
      const raw = (await (await nm.bus.getProxyObject(NM, path)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as Record<
        string,
        Record<string, { value: unknown }>
      >;
      ids.set(path, String(raw.connection.id.value));
      if (raw.connection.id.value === 'platform-user-home') ids.set('priority:home', String(raw.connection['autoconnect-priority'].value));
    }
    return ids;
  };
  const calls = async (method: string) => {
    const ids = await pathOf();
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes(` ${method} `))
      .map((l) => ids.get(/"(\/org\/freedesktop\/NetworkManager\/[^"]+)"/.exec(l)?.[1] ?? '') ?? l);
  };
  // Real D-Bus calls take real time: each 15 s check is run to its end before the clock moves on.
  const run = async (ms: number) => {
    for (let left = ms; left > 0; left -= 15_000) {
      await clock.advance(Math.min(15_000, left));
      await sup.step();
    }
  };
  await sup.step();
  await run(2 * 60_000);
  t.is(sup.state, 'provisioning');
  t.deepEqual(await calls('ActivateConnection'), ['platform-net-high', 'platform-net-low', 'platform-hotspot'], 'by priority; away is not visible');

  // The hotspot's active connection, to recognise it in DeactivateConnection's argument.
  const props = (path: string) => nm.bus.getProxyObject(NM, path).then((o) => o.getInterface('org.freedesktop.DBus.Properties'));
  const settingsPath = [...(await pathOf()).entries()].find(([, id]) => id === 'platform-hotspot')![0];
  let hotspotActive = '';
  for (const a of ((await (await props('/org/freedesktop/NetworkManager')).Get(NM, 'ActiveConnections')) as { value: string[] }).value) {
    if (((await (await props(a)).Get(`${NM}.Connection.Active`, 'Connection')) as { value: string }).value === settingsPath) hotspotActive = a;
  }
  t.truthy(hotspotActive);
  const deactivated = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.includes(' DeactivateConnection '))
      .map((l) => (l.includes(`"${hotspotActive}"`) ? 'platform-hotspot' : l));
  await run(8 * 60_000);
  sup.userActivity();
  await run(4 * 60_000); // past the retry timer, but the user was active 4 minutes ago
  t.deepEqual(deactivated(), []);
  await run(1.25 * 60_000);
  t.deepEqual(deactivated(), ['platform-hotspot'], 'left after 5 idle minutes');
  await run(15_000 * 3);
  t.is(sup.state, 'provisioning', 'nothing connected: the hotspot is back');

  const service = new ProvisioningService({
    network: sup,
    backend,
    config: () => config,
    credentialsFile: join(dir, 'platform.json'),
    logger: new Logger('silent'),
  });
  const port = await service.listen('127.0.0.1', 0);
  const client = new ProvisioningServiceClient(`127.0.0.1:${port}`, grpcCredentials.createInsecure());
  t.teardown(async () => {
    client.close();
    await service.close();
    await sup.stop();
  });
  const set = promisify<SetNetworkCredentialsRequest, unknown>((req, cb: (e: ServiceError | null, r: unknown) => void) =>
    client.setNetworkCredentials(req, cb),
  );
  await set({ type: 'wifi', ssid: 'home', psk: 'home-password', priority: 77 });
  const ids = await pathOf();
  t.is(ids.get('priority:home'), '77');
  t.is((await calls('ActivateConnection')).at(-1), 'platform-user-home');
});
