// The control page opened from the cloud's page, in a real browser (headless Debian chromium), with the
// real programs: platform-cloud, platform-server online as its part, and a browser that cannot reach the
// machine's gRPC or web port (every request to them is refused and recorded). The page signals over
// gRPC-Web to the cloud and runs every call on a WebRTC data channel; the test checks the effects at the
// machine through ordinary gRPC clients.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { MotorServiceClient } from '../../gen/platform/component/motor/v1/motor.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually } from '../../core/server/testing/spawn-runtime.js';
import { launchChromium, webUrlOf } from '../../core/serving/testing/chromium.js';
import { startWebRtcCloud, webrtcComponents, type WebRtcCloud } from './testing/webrtc-harness.js';
import { until } from './testing/online-helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let world: WebRtcCloud;
/** The machine's gRPC and web ports: the browser may not reach them. */
let machinePorts: Set<string>;

test.before(async () => {
  // Both pages' bundles, as `npm run build` makes them (the cloud serves the control page's).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  const camera = { name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 160, height_px: 120 } };
  world = await startWebRtcCloud({ machines: [{ name: 'rover' }], components: [...webrtcComponents(21), camera] });
  const rover = world.machines.rover;
  machinePorts = new Set([rover.runtime.address.slice(rover.runtime.address.lastIndexOf(':') + 1), new URL(webUrlOf(rover.runtime.output())).port]);
  // The machine answers once its config arrived and its Answer stream is up.
  const client = await until('the machine answering through the cloud', () => world.dial(rover.part_id, world.key));
  client.close();
});

test.after.always(async () => {
  await world?.stop();
});

/** A browser context that refuses (and records) every request to the machine's ports, and records the rest. */
async function walledContext(t: { teardown(fn: () => Promise<void>): void }): Promise<{ context: BrowserContext; refused: string[]; requests: string[] }> {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
  const refused: string[] = [];
  const requests: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (machinePorts.has(url.port)) {
      refused.push(url.href);
      return route.abort('connectionrefused');
    }
    requests.push(url.href);
    return route.continue();
  });
  return { context, refused, requests };
}

async function signIn(page: Page, key: { authEntity: string; payload: string }): Promise<void> {
  await page.goto(world.cloud.webUrl);
  await page.getByLabel('API key id').fill(key.authEntity);
  await page.getByLabel('API key', { exact: true }).fill(key.payload);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
}

test.serial(
  "the Machines view opens a machine's control page over WebRTC through the cloud: readings, logs and a motor, with the machine's ports out of the browser's reach",
  async (t) => {
    const rover = world.machines.rover;
    const { context, refused, requests } = await walledContext(t);
    const page = await context.newPage();
    await signIn(page, world.key);
    await page.getByRole('navigation').getByRole('link', { name: 'Machines', exact: true }).click();
    const link = page.locator(`a[data-control="${rover.part_id}"]`);
    t.is(await link.getAttribute('href'), `control/?part=${rover.part_id}`);
    const [control] = await Promise.all([context.waitForEvent('page'), link.click()]);

    // Connected through the cloud, and the machine's resources and live values are shown. The page dials
    // with a deadline of its own and says why it could not connect: a refusal fails the test with its words
    // (this wait once ran out, on a loaded machine, with nothing to say what the page showed). The test's
    // deadline only bounds a broken test: the new tab's load and the handshake are slow on a loaded machine.
    const transport = control.getByTestId('transport').filter({ hasText: 'WebRTC through the cloud' });
    const refusal = control.getByRole('alert');
    await transport.or(refusal).first().waitFor({ timeout: 120_000 });
    if (!(await transport.isVisible())) throw new Error(`the control page did not connect: ${await refusal.first().innerText()}`);
    const table = control.getByTestId('resources');
    for (const name of ['b', 'm', 'thermo']) await table.locator('tr', { hasText: name }).filter({ hasText: 'ready' }).first().waitFor();
    const readings = control.getByTestId('readings-thermo');
    await readings.filter({ hasText: '"celsius": 21' }).waitFor();
    const sensors = new SensorServiceClient(rover.runtime.address, insecure());
    t.teardown(() => sensors.close());
    await call(sensors, 'doCommand', { name: 'thermo', command: { set: { celsius: 23 } } });
    await readings.filter({ hasText: '"celsius": 23' }).waitFor();
    // A request larger than one browser packet (16,373 bytes) goes out in several and is joined at the machine.
    const pad = 'x'.repeat(40_000);
    const thermo = control.locator('section[data-resource="thermo"]');
    await thermo.getByText('DoCommand').click();
    await thermo.getByLabel('command for thermo').fill(JSON.stringify({ set: { celsius: 24, pad } }));
    await thermo.getByRole('button', { name: 'Send' }).click();
    const stored = await eventually(
      async () => ((await call(sensors, 'getReadings', { name: 'thermo' })) as { readings: { celsius: number; pad?: string } }).readings,
      (r) => r.celsius === 24,
    );
    t.is(stored.pad, pad);
    // Answers larger than one packet come back whole: the camera's image and its point cloud.
    const image = control.getByAltText('image of cam');
    await image.and(control.locator('[data-mime]')).waitFor();
    // naturalWidth is 0 while a newer frame loads: wait for a decoded one.
    const width = await eventually(
      () => image.evaluate((img: { naturalWidth: number }) => img.naturalWidth),
      (w) => w > 0,
    );
    t.is(width, 160);
    await control.getByTestId('pointcloud-cam').and(control.locator(':not([data-points="0"])')).waitFor();
    // A server stream over the channel: the machine's log lines.
    await control.getByTestId('logs').getByRole('log').locator('.log').first().waitFor();

    // The power slider commands the motor on the machine; StopAll stops it.
    const motors = new MotorServiceClient(rover.runtime.address, insecure());
    const board = new BoardServiceClient(rover.runtime.address, insecure());
    t.teardown(() => {
      motors.close();
      board.close();
    });
    const moving = async () => (await call(motors, 'isMoving', { name: 'm' })).isMoving as boolean;
    await control.getByLabel('power of m').fill('50');
    t.true(await eventually(moving, (m) => m));
    t.is(
      await eventually(
        async () => (await call(board, 'pwm', { name: 'b', pin: '36' })).dutyPct as number,
        (d) => d === 0.5,
      ),
      0.5,
    );
    await control.getByRole('button', { name: 'StopAll' }).click();
    t.false(await eventually(moving, (m) => !m));
    // The page's session is held over the channel too: commanded again, then the tab closes, its
    // heartbeats stop, and the session's expiry stops the motor.
    await control.getByLabel('power of m').fill('40');
    t.true(await eventually(moving, (m) => m));

    // Nothing went to the machine's ports, and no machine API went over HTTP: only the cloud's signaling.
    t.deepEqual(refused, []);
    const origin = new URL(world.cloud.webUrl).origin;
    t.deepEqual(
      requests.filter((u) => !u.startsWith(origin)),
      [],
    );
    const calls = requests.filter((u) => new URL(u).pathname.split('/').length === 3 && /^\/platform\./.test(new URL(u).pathname));
    t.true(calls.some((u) => u.endsWith('/platform.rpc.webrtc.v1.SignalingService/Call')));
    t.true(calls.some((u) => u.endsWith('/platform.rpc.webrtc.v1.SignalingService/CallUpdate')));
    t.deepEqual(
      calls.filter((u) => /robot\.v1\.RobotService|\.component\./.test(u)),
      [],
    );
    await control.close();
    t.false(await eventually(moving, (m) => !m));
    const expired = async () => rover.runtime.logs().some((l) => l.msg === 'session expired without a heartbeat; stopping the actuators it commanded last');
    t.true(await eventually(expired, (e) => e));
  },
);

test.serial("a key of another organization signed in to the cloud's page gets the cloud's refusal, never the machine", async (t) => {
  const rover = world.machines.rover;
  const { context, refused } = await walledContext(t);
  const page = await context.newPage();
  await signIn(page, world.strangerKey);
  await page.goto(`${world.cloud.webUrl}control/?part=${rover.part_id}`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.regex(await alert.innerText(), /cannot reach machine part .* through the cloud: Call: .*\(gRPC status 7\)/);
  t.is(await page.getByTestId('resources').count(), 0);
  t.deepEqual(refused, []);
});

test.serial('the control page opened without signing in to the cloud says so', async (t) => {
  const { context } = await walledContext(t);
  const page = await context.newPage();
  await page.goto(`${world.cloud.webUrl}control/?part=${world.machines.rover.part_id}`);
  // Whatever the page says, in the failure's message when it is not this.
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.regex(await alert.innerText(), /not signed in to the cloud in this tab/);
});
