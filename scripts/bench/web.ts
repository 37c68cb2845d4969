// npm run bench:web — for each web page: the gzip size of the JavaScript its first view loads, and the
// time from navigation to interactive over loopback in headless Chromium, against the targets
// (300 KB gzip, 1 s), measured in this run. Served by the real programs from dist/ (npm run build first):
// - the runtime's control page (platform-server, 10 resources): the resource table from live answers;
// - the cloud's data browser (platform-cloud, 24 uploaded 640x480 PNGs): the sign-in form for a new
//   visitor, and, signed in, the data grid with its 24 thumbnails shown (cold thumbnail cache on the
//   first load, warm after);
// - the control page through the cloud (platform-server online as the cloud's part, the same 10
//   resources): opened at the cloud's /control/?part=<id> with a session in the tab, so interactive
//   includes the WebRTC connection through the cloud's signaling and the first status over the channel.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchChromium, webUrlOf } from '../../core/serving/testing/chromium.js';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { call as cloudCall, partClients } from '../../cloud/parts/testing/part-clients.js';
import { noisyPng } from '../../cloud/web/testing-images.js';
import type { Browser } from 'playwright-core';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGET_KB = 300;
const TARGET_S = 1;
const MAIN = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD_MAIN = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const IMAGES = 24;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const dir = mkdtempSync(join(tmpdir(), 'platform-bench-web-'));
const components = [
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  ...Array.from({ length: 4 }, (_, i) => ({
    name: `m${i}`,
    api: 'core:component:motor',
    model: 'gpio',
    attributes: { board: 'b', pins: { pwm: String(10 + 2 * i), dir: String(11 + 2 * i) }, max_rpm: 100 },
  })),
  ...Array.from({ length: 5 }, (_, i) => ({ name: `s${i}`, api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: i } } })),
];
writeFileSync(join(dir, 'config.json'), JSON.stringify({ network: { bind_address: 'localhost:0' }, components }));
const server = spawn(process.execPath, [MAIN, '-config', join(dir, 'config.json'), '-ftdc=false'], { stdio: ['ignore', 'pipe', 'inherit'] });
let output = '';
const url = await new Promise<string>((resolve, reject) => {
  server.stdout!.on('data', (d: Buffer) => {
    output += d.toString();
    if (/web page on \S+\n/.test(output)) resolve(webUrlOf(output));
  });
  server.once('exit', (code) => reject(new Error(`platform-server exited with ${code}:\n${output}`)));
});

const browser = await launchChromium();
try {
  const times: number[] = [];
  const calls: { start: number; duration: number }[] = [];
  let gzipBytes = 0;
  let rawBytes = 0;
  for (let run = 0; run < RUNS; run++) {
    // A fresh context each time: nothing cached.
    const context = await browser.newContext();
    const page = await context.newPage();
    const scripts: Promise<Buffer>[] = [];
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push(scriptBody(response));
    });
    await page.goto(url);
    await page.locator('html[data-ready="1"]').waitFor();
    // Navigation start to the resource table showing live statuses, by the page's own clock.
    // (Expressions as strings: this file is type-checked without the DOM library.)
    times.push((await page.evaluate<number>("performance.getEntriesByName('platform-interactive')[0].startTime")) / 1000);
    // Where the time goes: the first status call's round trip through the web port and the runtime.
    const first = await page.evaluate<{ start: number; duration: number } | undefined>(
      "(() => { const c = performance.getEntriesByType('resource').find((e) => e.name.endsWith('/GetMachineStatus')); return c && { start: c.startTime, duration: c.duration }; })()",
    );
    if (first) calls.push(first);
    const bodies = await Promise.all(scripts);
    gzipBytes = bodies.reduce((sum, b) => sum + gzipSync(b, { level: 9 }).length, 0);
    rawBytes = bodies.reduce((sum, b) => sum + b.length, 0);
    await context.close();
  }
  console.log(`web pages over loopback, headless Chromium, ${RUNS} cold loads each; targets ${TARGET_KB} KB gzip JavaScript, ${TARGET_S} s to interactive`);
  report('runtime control page', { times, gzipBytes, rawBytes });
  console.log(
    `  first GetMachineStatus: sent at median ${median(calls.map((c) => c.start)).toFixed(0)} ms, round trip median ${median(calls.map((c) => c.duration)).toFixed(0)} ms`,
  );
  await benchCloud(browser);
} finally {
  await browser.close();
  server.kill('SIGTERM');
}

/**
 * A script's body, read while its page is open. A chunk that arrives after the page became interactive
 * (the data grid's upload panel) may still be in flight when the context closes: its read then fails,
 * and is handled here rather than left to crash the bench as an unhandled rejection.
 */
function scriptBody(response: { body(): Promise<Buffer> }): Promise<Buffer> {
  const body = response.body();
  body.catch(() => undefined);
  return body;
}

/** Cold loads of one page until its `platform-interactive` mark: seconds, and the gzip/raw bytes of its scripts. */
async function coldLoads(browser: Browser, url: string, init?: string): Promise<{ times: number[]; gzipBytes: number; rawBytes: number; thumbnails: number }> {
  const times: number[] = [];
  let gzipBytes = 0;
  let rawBytes = 0;
  let thumbnails = 0;
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext();
    if (init) await context.addInitScript(init);
    const page = await context.newPage();
    const scripts: Promise<Buffer>[] = [];
    let thumbs = 0;
    page.on('response', (response) => {
      if (response.request().resourceType() === 'script') scripts.push(scriptBody(response));
      if (response.url().includes('/thumbnails/')) thumbs++;
    });
    await page.goto(url);
    await page.locator('html[data-ready="1"]').waitFor();
    times.push((await page.evaluate<number>("performance.getEntriesByName('platform-interactive')[0].startTime")) / 1000);
    const bodies = await Promise.all(scripts);
    gzipBytes = bodies.reduce((sum, b) => sum + gzipSync(b, { level: 9 }).length, 0);
    rawBytes = bodies.reduce((sum, b) => sum + b.length, 0);
    thumbnails = thumbs;
    await context.close();
  }
  return { times, gzipBytes, rawBytes, thumbnails };
}

function report(name: string, r: { times: number[]; gzipBytes: number; rawBytes: number }): void {
  const m = median(r.times);
  console.log(
    `${name.padEnd(22)}JavaScript ${(r.gzipBytes / 1024).toFixed(1)} KB gzip (${(r.rawBytes / 1024).toFixed(1)} KB raw), ratio to target ${(r.gzipBytes / 1024 / TARGET_KB).toFixed(2)}x  ` +
      `load to interactive median ${m.toFixed(3)} s (min ${Math.min(...r.times).toFixed(3)}, max ${Math.max(...r.times).toFixed(3)}), ratio to target ${(m / TARGET_S).toFixed(2)}x`,
  );
}

async function benchCloud(browser: Browser): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-bench-web-cloud-'));
  const cloud = spawn(process.execPath, [CLOUD_MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    let out = '';
    const [address, webUrl] = await new Promise<[string, string]>((resolve, reject) => {
      cloud.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const serving = /platform-cloud serving (\S+)\n/.exec(out);
        const web = /platform-cloud web page on (\S+)\n/.exec(out);
        if (serving && web) resolve([serving[1], web[1]]);
      });
      cloud.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code}:\n${out}`)));
    });
    const admin = async <T>(action: string, args: Record<string, unknown>) => (await callAdminChannel(dataDir, action, args))!.result as T;
    const org = (await admin<{ id: string }>('org.create', { name: 'bench' })).id;
    const machine = await admin<{ part_id: string; part_secret: string }>('machine.create', { org, name: 'rover' });
    const key = await admin<{ id: string; key: string }>('key.create', { org, role: 'owner' });
    const part = createCloudClient({
      serviceHost: address,
      credentials: { type: 'robot-secret', authEntity: machine.part_id, payload: machine.part_secret } as never,
    });
    const owner = createCloudClient({ serviceHost: address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } as never });
    for (let i = 0; i < IMAGES; i++) {
      const now = new Date();
      const id = await part.dataClient.binaryDataCaptureUpload(
        noisyPng(640, 480, i + 1),
        machine.part_id,
        'camera',
        'cam',
        'ReadImage',
        '.png',
        [now, now],
        ['bench'],
      );
      await owner.dataClient.addBoundingBoxToImageById(id, 'thing', 0.2, 0.2, 0.6, 0.7);
    }
    const token = ((await owner.connection.metadata()).get('authorization')[0] as string).replace(/^Bearer /, '');
    part.close();
    owner.close();

    const signIn = await coldLoads(browser, webUrl);
    report('cloud sign-in form', signIn);
    // Signed in already (the tab's sessionStorage holds the session): the data grid and its thumbnails.
    const session = JSON.stringify({ keyId: key.id, key: key.key, token, orgId: org });
    const grid = await coldLoads(browser, webUrl, `sessionStorage.setItem('platform-cloud.session', ${JSON.stringify(session)})`);
    report('cloud data grid', grid);
    console.log(`  the grid loaded ${grid.thumbnails} thumbnails (160 px JPEG) for ${IMAGES} images; first load with a cold thumbnail cache, ${RUNS - 1} warm`);
    await benchThroughCloud(browser, {
      address,
      webUrl,
      dataDir,
      machine,
      key,
      init: `sessionStorage.setItem('platform-cloud.session', ${JSON.stringify(session)})`,
    });
  } finally {
    cloud.kill('SIGTERM');
  }
}

/** The control page served by the cloud for the rover, whose platform-server is online and answers WebRTC. */
async function benchThroughCloud(
  browser: Browser,
  o: { address: string; webUrl: string; dataDir: string; machine: { part_id: string; part_secret: string }; key: { id: string; key: string }; init: string },
): Promise<void> {
  const app = await partClients(o.address, o.key);
  try {
    await cloudCall(app.app.updateRobotPart.bind(app.app), { id: o.machine.part_id, robotConfig: { components } }, app.md);
  } finally {
    app.close();
  }
  const credentials = { cloud: { id: o.machine.part_id, secret: o.machine.part_secret, app_address: o.address }, network: { bind_address: 'localhost:0' } };
  writeFileSync(join(o.dataDir, 'rover.json'), JSON.stringify(credentials));
  const rover = spawn(process.execPath, [MAIN, '-config', join(o.dataDir, 'rover.json'), '-ftdc=false'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-bench-web-online-')) },
  });
  try {
    const url = `${o.webUrl}control/?part=${o.machine.part_id}`;
    // Until the rover is online and answering through the cloud (its first config, then its Answer stream).
    for (let attempt = 0; ; attempt++) {
      const context = await browser.newContext();
      await context.addInitScript(o.init);
      const page = await context.newPage();
      await page.goto(url);
      const ready = await Promise.race([
        page
          .locator('html[data-ready="1"]')
          .waitFor({ timeout: 30_000 })
          .then(() => true),
        page
          .getByRole('alert')
          .waitFor({ timeout: 30_000 })
          .then(() => false),
      ]).catch(() => false);
      await context.close();
      if (ready) break;
      if (attempt === 60) throw new Error('the rover never answered through the cloud');
      await new Promise((r) => setTimeout(r, 1000));
    }
    report('control page, cloud', await coldLoads(browser, url, o.init));
    console.log('  interactive includes signaling through the cloud, the WebRTC connection and the first status over the data channel');
  } finally {
    rover.kill('SIGTERM');
  }
}
