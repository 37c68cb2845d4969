// The control page in a real browser (headless Debian chromium) under the attacks of issue 27: a call
// with a 256 KiB resource name made from the page leaves the page's later calls working (finding 3); a
// page reached through a name that rebinds to this machine is refused, and no other site can frame the
// page (finding 10).
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../server/testing/grpc.js';
import { eventually, spawnRuntime } from '../server/testing/spawn-runtime.js';
import { CHROMIUM_ARGS, webUrlOf } from '../serving/testing/chromium.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];

test.before(() => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
});

test('an oversized resource name sent from the page gets a short error, and the page goes on showing live readings; a rebound name gets 403; no other site can frame it', async (t) => {
  const runtime = await spawnRuntime({ components });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  const port = new URL(url).port;
  // DNS rebinding, for real: the attacker's name resolves to this machine.
  const browser = await chromium.launch({
    executablePath: process.env.PLATFORM_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(url);
  const readings = page.getByTestId('readings-thermo');
  await readings.filter({ hasText: '"t": 1' }).waitFor();

  // GetReadings with a 256 KiB name, from the page's own origin, as a script on it could.
  const answer = await page.evaluate(async () => {
    const name = new TextEncoder().encode('n'.repeat(256 * 1024));
    // Field 1 (name), length-delimited: tag, varint length, bytes.
    const varint: number[] = [];
    for (let n = name.length; ; n >>>= 7) {
      if (n < 0x80) {
        varint.push(n);
        break;
      }
      varint.push((n & 0x7f) | 0x80);
    }
    const message = new Uint8Array([0x0a, ...varint, ...name]);
    const body = new Uint8Array(5 + message.length);
    new DataView(body.buffer).setUint32(1, message.length);
    body.set(message, 5);
    const res = await fetch('/platform.component.sensor.v1.SensorService/GetReadings', {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto' },
      body,
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    return new TextDecoder().decode(bytes.subarray(5));
  });
  t.regex(answer, /grpc-status: 5/);
  t.true(answer.length < 1500, `${answer.length} bytes of trailers`);

  // The page's own polling still works: a reading changed behind its back shows up.
  const sensors = new SensorServiceClient(runtime.address, insecure());
  await call(sensors, 'doCommand', { name: 'thermo', command: { set: { t: 42 } } });
  await readings.filter({ hasText: '"t": 42' }).waitFor();

  const rebound = await browser.newPage();
  const response = await rebound.goto(`http://rebind.attacker.example:${port}/`);
  t.is(response?.status(), 403);
  t.regex(await rebound.innerText('body'), /Host "rebind\.attacker\.example:\d+" is not a name of this web port/);

  // Another site framing the page (clickjacking), served from another local port: the browser refuses
  // to show the page in the frame.
  const framer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<iframe src="${url}"></iframe>`));
  await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
  t.teardown(() => framer.close());
  const framing = await browser.newPage();
  await framing.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
  await framing.waitForLoadState('load');
  const frame = framing.frames().find((f) => f !== framing.mainFrame());
  t.truthy(frame);
  // The frame's navigation can end after the page's own load: wait until it has gone somewhere.
  const frameUrl = await eventually(
    () => frame!.url(),
    (u) => u !== '' && u !== 'about:blank',
    { what: 'the frame to navigate' },
  );
  t.regex(frameUrl, /^chrome-error:/);
});
