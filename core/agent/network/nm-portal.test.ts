// Provisioning end to end against NetworkManager's D-Bus API as python3-dbusmock serves it
// (testing/nm-mock.ts): the real NetworkManagerBackend, NetworkSupervisor and ProvisioningEndpoints
// (captive portal and gRPC service). The portal is driven in headless Chromium: the network list on the
// page and GetNetworkList come from the mock's access points sorted by signal, a bad SSID is refused
// naming the field, and a network submitted through the form, or through SetNetworkCredentials, becomes
// a NetworkManager connection profile with its priority (the portal's form has none: 0) and is activated.
import test from 'ava';
import { credentials as grpcCredentials, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { launchChromium } from '../../serving/testing/chromium.js';
import { eventually } from '../../serving/testing/eventually.js';
import {
  ProvisioningServiceClient,
  type GetNetworkListResponse,
  type SetNetworkCredentialsRequest,
} from '../../../gen/platform/provisioning/v1/provisioning.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { startNmMock, type NmMock } from '../testing/nm-mock.js';
import { NetworkSupervisor } from './network-supervisor.js';
import { NetworkManagerBackend } from './nm-backend.js';
import { ProvisioningEndpoints } from './provisioning-endpoints.js';
import { HOTSPOT_ID } from './profiles.js';

const NM = 'org.freedesktop.NetworkManager';

type RawSettings = Record<string, Record<string, { value: unknown }>>;

/** Every connection profile NetworkManager holds, by id, read over D-Bus. */
async function nmProfiles(nm: NmMock): Promise<Map<string, RawSettings>> {
  const settings = (await nm.bus.getProxyObject(NM, '/org/freedesktop/NetworkManager/Settings')).getInterface(`${NM}.Settings`);
  const out = new Map<string, RawSettings>();
  for (const path of (await settings.ListConnections()) as string[]) {
    const raw = (await (await nm.bus.getProxyObject(NM, path)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as RawSettings;
    out.set(String(raw.connection.id.value), raw);
  }
  return out;
}

/** The ids of the active connection profiles, read over D-Bus. */
async function activeIds(nm: NmMock): Promise<string[]> {
  const props = async (path: string) => (await nm.bus.getProxyObject(NM, path)).getInterface('org.freedesktop.DBus.Properties');
  const ids = new Set<string>();
  for (const a of ((await (await props('/org/freedesktop/NetworkManager')).Get(NM, 'ActiveConnections')) as { value: string[] }).value) {
    const settings = ((await (await props(a)).Get(`${NM}.Connection.Active`, 'Connection')) as { value: string }).value;
    const raw = (await (await nm.bus.getProxyObject(NM, settings)).getInterface(`${NM}.Settings.Connection`).GetSettings()) as RawSettings;
    ids.add(String(raw.connection.id.value));
  }
  return [...ids].sort();
}

test('over D-Bus: the portal in Chromium and the gRPC service list networks by signal; a submitted network becomes a profile with its priority', async (t) => {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'nm-portal-'));
  const nm = await startNmMock();
  t.teardown(async () => {
    await nm.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const dev = (await nm.call('AddWiFiDevice', 'ssi', ['wlan0', 'wlan0', 30])) as string;
  for (const [name, ssid, signal] of [
    ['ap1', 'home', 40],
    ['ap2', 'cafe', 85],
    ['ap3', 'lab', 60],
  ] as const)
    await nm.call('AddAccessPoint', 'ssssuuuyu', [dev, name, ssid, `00:11:22:33:44:0${name.at(-1)}`, 2, 2437, 54000, signal, 0x100 | 0x8]);
  await nm.call('SetConnectivity', 'u', [1]); // none
  const backend = new NetworkManagerBackend({ bus: nm.bus, activationTimeoutMs: 5000 });
  const clock = new FakeClock();
  const logs: Record<string, unknown>[] = [];
  const logger = new Logger('info', {}, (l) => logs.push(JSON.parse(l) as Record<string, unknown>));
  const config = parseAgentConfig({ network_configuration: { offline_before_starting_hotspot_minutes: 1, manufacturer: 'Acme', model: 'Rover' } });
  const network = new NetworkSupervisor({ backend, clock, runner: new FakeRunner(), logger, minutes: (n) => n * 60_000, checkIntervalMs: 15_000 });
  await network.configure(config);
  // Checks run one by one, each to its end (real D-Bus calls take real time), until the hotspot is up.
  for (let i = 0; i < 10 && network.state !== 'provisioning'; i++) {
    await clock.advance(15_000);
    await network.step();
  }
  t.is(network.state, 'provisioning');
  t.deepEqual(await activeIds(nm), [HOTSPOT_ID]);

  const credentialsFile = join(dir, 'platform.json');
  const endpoints = new ProvisioningEndpoints({
    addresses: { portal: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 } },
    network,
    backend,
    config: () => config,
    credentialsFile,
    logger,
  });
  await endpoints.start();
  const addressOf = (msg: string) => String(logs.find((l) => l.msg === msg)?.address);
  const browser = await launchChromium();
  const client = new ProvisioningServiceClient(addressOf('provisioning service listening'), grpcCredentials.createInsecure());
  t.teardown(async () => {
    client.close();
    await browser.close();
    await endpoints.stop();
    await network.stop();
  });

  const list = await promisify<object, GetNetworkListResponse>((req, cb: (e: ServiceError | null, r: GetNetworkListResponse) => void) =>
    client.getNetworkList(req, cb),
  )({});
  t.deepEqual(
    list.networks.map((n) => [n.ssid, n.signal, n.security]),
    [
      ['cafe', 85, 'wpa-psk'],
      ['lab', 60, 'wpa-psk'],
      ['home', 40, 'wpa-psk'],
    ],
    'GetNetworkList: the access points NetworkManager sees, strongest first',
  );

  const page = await browser.newPage();
  await page.goto(`http://${addressOf('captive portal listening')}/generate_204`); // a phone's check lands on the form
  t.is(await page.locator('h1').textContent(), 'Acme Rover setup');
  t.deepEqual(await page.locator('#networks option').evaluateAll((os) => os.map((o) => o.getAttribute('value'))), ['cafe', 'lab', 'home']);
  await page.fill('input[name=ssid]', 'a-network-name-longer-than-32-bytes');
  await page.fill('input[name=password]', 'home-password');
  await page.click('button[type=submit]');
  t.is(await page.locator('#error').textContent(), 'ssid: must be at most 32 bytes (is 35)');
  t.false((await nmProfiles(nm)).has('platform-user-a-network-name-longer-than-32-bytes'), 'bad input changes nothing');
  t.is(network.state, 'provisioning');

  await page.fill('input[name=ssid]', 'home');
  await page.fill('input[name=password]', 'home-password');
  await page.fill('textarea[name=credentials]', JSON.stringify({ cloud: { app_address: 'https://cloud.example:443', id: 'part-9', secret: 'abc' } }));
  await page.click('button[type=submit]');
  t.regex((await page.locator('#done').textContent()) ?? '', /joining home/);
  // The form is answered before the network is joined (joining stops the hotspot the phone is on).
  const active = await eventually(
    () => activeIds(nm),
    (ids) => ids.includes('platform-user-home') && !ids.includes(HOTSPOT_ID),
    { what: 'home active in NetworkManager, the hotspot not', timeoutMs: 10_000 },
  );
  t.deepEqual(active, ['platform-user-home']);
  const home = (await nmProfiles(nm)).get('platform-user-home')!;
  t.is(home.connection['autoconnect-priority'].value, 0, "the portal's form has no priority: 0");
  t.is(Buffer.from(home['802-11-wireless'].ssid.value as Buffer).toString(), 'home');
  t.is(home['802-11-wireless-security'].psk.value, 'home-password');
  t.like(JSON.parse(readFileSync(credentialsFile, 'utf8')), { cloud: { id: 'part-9', secret: 'abc' } });

  // The same through gRPC, with a negative priority (a signed value on the bus).
  await promisify<SetNetworkCredentialsRequest, unknown>((req, cb: (e: ServiceError | null, r: unknown) => void) => client.setNetworkCredentials(req, cb))({
    type: 'wifi',
    ssid: 'lab',
    psk: 'lab-password',
    priority: -12,
  });
  const lab = (await nmProfiles(nm)).get('platform-user-lab')!;
  t.is(lab.connection['autoconnect-priority'].value, -12);
  t.is(lab['802-11-wireless-security'].psk.value, 'lab-password');
  t.true((await activeIds(nm)).includes('platform-user-lab'));
  t.log(`over D-Bus with Chromium in ${Date.now() - started} ms`);
});
