// The captive portal driven in headless Chromium, as a phone on the hotspot would use it: a bad SSID
// shows the error naming the field, then a good network and credentials are submitted through the
// form; the network becomes a profile and is joined, and the credentials file is written.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { launchChromium } from '../../serving/testing/chromium.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeNetworkBackend } from '../testing/fake-network.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { CaptivePortal } from './captive-portal.js';
import { NetworkSupervisor } from './network-supervisor.js';

test('a user joins a network through the portal form in Chromium', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portal-browser-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const backend = new FakeNetworkBackend();
  backend.addAir({ ssid: 'home', psk: 'home-password', signal: 70 });
  const clock = new FakeClock();
  const network = new NetworkSupervisor({
    backend,
    clock,
    runner: new FakeRunner(),
    logger: new Logger('silent'),
    minutes: (n) => n * 60_000,
    checkIntervalMs: 15_000,
  });
  await network.configure(parseAgentConfig({ network_configuration: { offline_before_starting_hotspot_minutes: 0 } }));
  network.start();
  await clock.advance(15_000);
  t.is(network.state, 'provisioning');
  const credentialsFile = join(dir, 'platform.json');
  const portal = new CaptivePortal({
    hooks: { userActivity: () => network.userActivity(), listNetworks: () => backend.scan(), submitNetwork: (s, p) => network.submitNetwork(s, p) },
    credentialsFile,
    logger: new Logger('silent'),
    title: 'Acme Rover setup',
  });
  const addr = await portal.listen('127.0.0.1', 0);
  const browser = await launchChromium();
  t.teardown(async () => {
    await browser.close();
    await portal.close();
    await network.stop();
  });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${addr.port}/hotspot-detect.html`); // a phone's check lands on the form
  t.is(await page.locator('h1').textContent(), 'Acme Rover setup');
  t.is(await page.locator('#networks option').first().getAttribute('value'), 'home');

  await page.fill('input[name=ssid]', 'a-network-name-longer-than-32-bytes');
  await page.fill('input[name=password]', 'home-password');
  await page.click('button[type=submit]');
  t.is(await page.locator('#error').textContent(), 'ssid: must be at most 32 bytes (is 35)');

  await page.fill('input[name=ssid]', 'home');
  await page.fill('input[name=password]', 'home-password');
  await page.fill('textarea[name=credentials]', JSON.stringify({ cloud: { app_address: 'https://cloud.example:443', id: 'part-9', secret: 'abc' } }));
  await page.click('button[type=submit]');
  t.regex((await page.locator('#done').textContent()) ?? '', /joining home/);
  for (let i = 0; i < 100 && backend.active !== 'platform-user-home'; i++) await new Promise((r) => setTimeout(r, 20));
  t.like(backend.store.get('platform-user-home'), { ssid: 'home', psk: 'home-password', priority: 0 });
  t.is(backend.active, 'platform-user-home');
  t.like(JSON.parse(readFileSync(credentialsFile, 'utf8')), { cloud: { id: 'part-9', secret: 'abc' } });
});
