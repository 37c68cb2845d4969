// The control page in a real browser (headless Debian chromium): the real platform-server serves it, the
// page commands through gRPC-Web, and the test checks the effects through ordinary gRPC clients.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { encode } from 'fast-png';
import { writeChannelMeansModel } from '../../drivers/mlmodel/testing/tiny-onnx.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from '../server/testing/grpc.js';
import { eventually, spawnRuntime } from '../server/testing/spawn-runtime.js';
import { launchChromium, webUrlOf } from '../serving/testing/chromium.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots land in the ignored test-output folder; core/web/README.md shows copies of them. */
const SHOTS = join(ROOT, '.platform-test', 'web');

const components = [
  { name: 'b', api: 'core:component:board', model: 'fake', attributes: {} },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '10', dir: '11' }, max_rpm: 100 } },
  { name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } },
];

test.before(() => {
  // The page's bundle, as `npm run build` makes it (esbuild; a second or two).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  mkdirSync(SHOTS, { recursive: true });
});

test.serial(
  'the page lists the resources, shows live readings, drives a motor, StopAll stops it, and closing the tab stops it through its session',
  async (t) => {
    const runtime = await spawnRuntime({ components, session: { heartbeat_window: '1s' } });
    t.teardown(() => runtime.stop());
    const url = webUrlOf(runtime.output());
    t.regex(url, /^http:\/\/localhost:\d+\/$/);
    const board = new BoardServiceClient(runtime.address, insecure());
    const sensors = new SensorServiceClient(runtime.address, insecure());
    const duty = async () => (await call(board, 'pwm', { name: 'b', pin: '10' })).dutyPct as number;

    const browser = await launchChromium();
    t.teardown(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);

    // Every resource, with its state and revision, in the table.
    const table = page.getByTestId('resources');
    for (const name of ['b', 'm', 'thermo']) await table.locator('tr', { hasText: name }).filter({ hasText: 'ready' }).first().waitFor();
    t.regex(await table.innerText(), /thermo\s+core:component:sensor\s+ready\s+1/);
    t.is(await page.getByTestId('machine-state').innerText(), 'running');

    // A reading changed behind the page's back shows up on the page.
    const readings = page.getByTestId('readings-thermo');
    await readings.filter({ hasText: '"t": 1' }).waitFor();
    await call(sensors, 'doCommand', { name: 'thermo', command: { set: { t: 42 } } });
    await readings.filter({ hasText: '"t": 42' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'runtime-page.png'), fullPage: true });

    // The power slider commands the motor, which drives the board's PWM pin.
    await page.getByLabel('power of m').fill('50');
    t.is(await eventually(duty, (d) => d === 0.5), 0.5);
    await page.getByTestId('motor-m').filter({ hasText: 'powered 50%' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'runtime-page-motor.png'), fullPage: true });

    // StopAll, always in the header.
    await page.getByRole('button', { name: 'StopAll' }).click();
    t.is(await eventually(duty, (d) => d === 0), 0);

    // Commanded again, then the tab closes: heartbeats stop and the session's expiry stops the motor.
    await page.getByLabel('power of m').fill('40');
    t.is(await eventually(duty, (d) => d === 0.4), 0.4);
    await context.close();
    t.is(await eventually(duty, (d) => d === 0), 0);
    // The runtime logs the expiry before it stops the motor, but its output reaches the test on its own pipe:
    // the line may come in after the motor was seen stopped.
    const expiry = await eventually(
      () =>
        runtime.logs().find((l) => l.msg === 'session expired without a heartbeat; stopping the actuators it commanded last') as
          { resources: string[] } | undefined,
      (line) => line !== undefined,
      { what: 'the expiry logged' },
    );
    t.deepEqual(expiry?.resources, ['m']);
  },
);

test.serial('a reading whose call stalls is abandoned at the poll deadline, and the page goes on showing live readings', async (t) => {
  const runtime = await spawnRuntime({ components });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  // The first GetReadings never gets an answer, as over a connection that stalled; the later ones go through.
  let stalled = 0;
  let answered = 0;
  await page.route('**/platform.component.sensor.v1.SensorService/GetReadings', async (route) => {
    if (stalled++ === 0) return;
    answered++;
    await route.continue();
  });
  await page.goto(webUrlOf(runtime.output()));
  // Before the poll had a deadline, the panel waited for the first call forever and showed no reading.
  await page.getByTestId('readings-thermo').filter({ hasText: '"t": 1' }).waitFor({ timeout: 60_000 });
  t.true(stalled >= 2, 'the poll asked again after the stalled call');
  t.true(answered >= 1);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
});

test.serial('a camera shows its image and its point cloud in the 3D view (the canvas is not blank)', async (t) => {
  const runtime = await spawnRuntime({
    components: [{ name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 160, height_px: 120 } }],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(webUrlOf(runtime.output()));
  await page.getByAltText('image of cam').waitFor();
  const canvas = page.getByTestId('pointcloud-cam');
  await canvas.and(page.locator(':not([data-points="0"])')).waitFor();
  // Pixels that differ from the background: the points really were painted (getImageData, not the counter).
  const lit = await canvas.evaluate<number, HTMLCanvasElementLike>((c) => {
    const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] !== 0x11 || data[i + 1] !== 0x11 || data[i + 2] !== 0x11) count++;
    return count;
  });
  t.true(lit > 1000, `only ${lit} pixels lit`);
  t.is(await canvas.getAttribute('data-points'), String(lit), 'the view counts the pixels it painted');
  await page.screenshot({ path: join(SHOTS, 'runtime-page-camera.png'), fullPage: true });
});

test.serial('live logs show what the runtime logs, the level filter hides it, and the page follows a restarted runtime', async (t) => {
  const sensor = (name: string) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } });
  let runtime = await spawnRuntime({ components: [sensor('a')] });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(url);
  const logs = page.getByTestId('logs');
  const line = (text: string) => logs.locator('.log', { hasText: text });
  // The backlog: the start-up lines.
  await line('platform.server serving').first().waitFor();
  await page.getByTestId('logs-link').filter({ hasText: 'live' }).waitFor();

  // A line logged now (info) and one that is an error, both from a save behind the page's back.
  runtime.writeConfig({ components: [sensor('a'), sensor('b')] });
  await line('platform.server reconfigured').waitFor();
  runtime.writeConfig({ components: 'none' });
  const rejected = line('the saved config is invalid; still running the previous one');
  await rejected.waitFor();
  t.regex(await rejected.innerText(), /error platform\.server the saved config is invalid/);
  await page.screenshot({ path: join(SHOTS, 'runtime-page-logs.png'), fullPage: true });

  // The filter: "error and above" hides the info line and keeps the error.
  await page.getByLabel('log level').selectOption('error');
  await line('platform.server reconfigured').waitFor({ state: 'detached' });
  t.is(await line('platform.server reconfigured').count(), 0);
  t.is(await rejected.count(), 1);
  await page.getByLabel('log level').selectOption('info');
  await line('platform.server reconfigured').waitFor();

  // The runtime restarts on the same ports: the page reconnects and shows the new runtime's lines.
  const web = new URL(url);
  await runtime.stop();
  await page.getByTestId('logs-link').filter({ hasText: 'reconnecting' }).waitFor();
  runtime = await spawnRuntime({ components: [sensor('c')], network: { bind_address: runtime.address, web_bind_address: `localhost:${web.port}` } });
  t.is(webUrlOf(runtime.output()), url);
  await page.getByTestId('logs-link').filter({ hasText: 'live' }).waitFor();
  await line('platform.server serving').nth(1).waitFor();
  t.is(await line('platform.server serving').count(), 2, 'the new backlog adds the new start-up, and repeats no line');
  t.is(await line('platform.server reconfigured').count(), 1);
});

test.serial('the config editor lists a bad save by path and rule, and a good save reconfigures the machine', async (t) => {
  const sensor = (name: string) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } });
  const runtime = await spawnRuntime({ components: [sensor('a')] });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => robot.close());
  const names = async () => ((await call(robot, 'resourceNames', {})).resources as { name: string }[]).map((r) => r.name).sort();
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
  await page.goto(webUrlOf(runtime.output()));
  const config = page.getByTestId('config');
  const editor = page.getByLabel('machine config');
  await config.filter({ hasText: 'revision 1' }).waitFor();
  t.deepEqual(JSON.parse(await editor.inputValue()).components, [sensor('a')]);

  // A bad save: nothing is written, the errors are listed by path and rule.
  const before = readFileSync(runtime.configPath, 'utf8');
  await editor.fill(JSON.stringify({ components: [sensor('a')], network: { bind_address: runtime.address }, session: { heartbeat_window: 'soon' } }, null, 2));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const errors = config.getByTestId('config-errors');
  await errors.waitFor();
  t.regex(await errors.innerText(), /session\.heartbeat_window\s+\S/);
  await config.getByTestId('config-note').filter({ hasText: 'not saved' }).waitFor();
  t.is(readFileSync(runtime.configPath, 'utf8'), before);
  await page.screenshot({ path: join(SHOTS, 'runtime-page-config.png'), fullPage: true });

  // A good save: the file watcher reconfigures the machine (checked over gRPC).
  const next = { components: [sensor('a'), sensor('b')], network: { bind_address: runtime.address } };
  await editor.fill(JSON.stringify(next, null, 2));
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await config.getByTestId('config-note').filter({ hasText: 'saved to' }).waitFor();
  t.deepEqual(await eventually(names, (n) => n.length === 2), ['a', 'b']);
  await config.filter({ hasText: 'revision 2' }).waitFor();
  t.is(await errors.count(), 0, 'no errors left on the page');
  await page.getByTestId('resources').locator('tr', { hasText: 'b' }).filter({ hasText: 'ready' }).first().waitFor();
});

test.serial("a vision service's obstacles are drawn as boxes in the camera's 3D view", async (t) => {
  const runtime = await spawnRuntime({
    components: [{ name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 160, height_px: 120, seed: 3 } }],
    services: [{ name: 'obstacles', api: 'core:service:vision', model: 'obstacles_depth', attributes: { camera_name: 'cam' } }],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1300 } });
  await page.goto(webUrlOf(runtime.output()));
  await page.getByAltText('image of cam').waitFor();
  await page.getByLabel('vision overlay of cam').selectOption('obstacles');
  const canvas = page.getByTestId('pointcloud-cam');
  // The fake camera's scene has two boxes on the floor: obstacles_depth finds both.
  await canvas.and(page.locator('[data-boxes="2"]')).waitFor();
  const painted = await canvas.evaluate<{ lit: number; magenta: number }, HTMLCanvasElementLike>((c) => {
    const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let lit = 0;
    let magenta = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] !== 0x11 || data[i + 1] !== 0x11 || data[i + 2] !== 0x11) lit++;
      if (data[i] > 200 && data[i + 1] < 60 && data[i + 2] > 200) magenta++;
    }
    return { lit, magenta };
  });
  t.true(painted.lit > 1000, `only ${painted.lit} pixels lit`);
  t.true(painted.magenta > 100, `only ${painted.magenta} pixels of box edges`);
  t.regex(await page.getByText(/points over \d+ pixels, 2 obstacles of obstacles/).innerText(), /2 obstacles/);
  // The service offers no detections or classifications: the page says so, as the runtime worded it.
  t.regex(await page.getByTestId('vision-cam').innerText(), /0 detections.*GetDetections/s);
  await page.screenshot({ path: join(SHOTS, 'runtime-page-obstacles.png'), fullPage: true });
});

test.serial("a vision service's classifications of the camera's frame are drawn over its image", async (t) => {
  // A tiny ONNX classifier whose answer is the image's dominant colour channel, and a red image.
  const dir = mkdtempSync(join(tmpdir(), 'runtime-page-vision-'));
  writeChannelMeansModel(join(dir, 'means.onnx'), 4);
  writeFileSync(join(dir, 'labels.txt'), 'red\ngreen\nblue\n');
  const [width, height] = [40, 30];
  const red = new Uint8Array(width * height * 3).map((_, i) => [230, 20, 20][i % 3]);
  writeFileSync(join(dir, 'red.png'), encode({ width, height, data: red, channels: 3, depth: 8 }));
  const runtime = await spawnRuntime({
    components: [{ name: 'pics', api: 'core:component:camera', model: 'image_file', attributes: { color_image_file_path: join(dir, 'red.png') } }],
    services: [
      {
        name: 'means',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: join(dir, 'means.onnx'), label_path: join(dir, 'labels.txt') },
      },
      { name: 'colours', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'means', camera_name: 'pics' } },
    ],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(webUrlOf(runtime.output()));
  await page.getByAltText('image of pics').waitFor();
  await page.getByLabel('vision overlay of pics').selectOption('colours');
  const overlay = page.getByTestId('vision-overlay');
  const top = overlay.locator('text.classification').first();
  await top.waitFor();
  t.regex((await top.textContent()) ?? '', /^red \d+%$/);
  t.is(await overlay.getAttribute('viewBox'), `0 0 ${width} ${height}`, "the overlay is in the image's own pixels");
  t.regex(await page.getByTestId('vision-pics').innerText(), /red \d+%/);
  await page.screenshot({ path: join(SHOTS, 'runtime-page-classifications.png'), fullPage: true });
});

test.serial('the vision overlay labels the frame it draws, on a camera that moves on with every call', async (t) => {
  // An image_file camera cycling through red, green, blue and red, and a classifier of the dominant colour:
  // with one call per frame for the image and one each for detections and classifications, the label
  // belonged to another image (two frames on).
  const dir = mkdtempSync(join(tmpdir(), 'runtime-page-frames-'));
  const pics = join(dir, 'pics');
  mkdirSync(pics);
  writeChannelMeansModel(join(dir, 'means.onnx'), 4);
  writeFileSync(join(dir, 'labels.txt'), 'red\ngreen\nblue\n');
  const [width, height] = [40, 30];
  const colours = { '1-red': [230, 20, 20], '2-green': [20, 230, 20], '3-blue': [20, 20, 230], '4-red': [200, 40, 40] };
  for (const [file, rgb] of Object.entries(colours)) {
    writeFileSync(
      join(pics, `${file}.png`),
      encode({ width, height, data: new Uint8Array(width * height * 3).map((_, i) => rgb[i % 3]), channels: 3, depth: 8 }),
    );
  }
  const runtime = await spawnRuntime({
    components: [{ name: 'pics', api: 'core:component:camera', model: 'image_file', attributes: { color_image_file_path: pics } }],
    services: [
      {
        name: 'means',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: join(dir, 'means.onnx'), label_path: join(dir, 'labels.txt') },
      },
      { name: 'colours', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'means', camera_name: 'pics' } },
    ],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(webUrlOf(runtime.output()));
  await page.getByAltText('image of pics').waitFor();
  await page.getByLabel('vision overlay of pics').selectOption('colours');
  await page.getByTestId('vision-overlay').locator('text.classification').first().waitFor();
  // Watched in the page: at every new frame of the <img> (a mutation observer, right after the render that
  // changed it) and at every animation frame between them, the <img> holds a decoded image (it used to blink
  // out while each new frame loaded) and its pixels are of the colour the overlay names (the label used to
  // lag behind the pixels until the load event). Until six new frames, or a minute.
  // (A string: this file is type-checked without the DOM library.)
  const watched = (await page.evaluate(`new Promise((resolve) => {
    const report = { frames: 0, colours: [], faults: [] };
    const canvas = document.createElement('canvas');
    const look = (when) => {
      const img = document.querySelector('img[alt="image of pics"]');
      if (!img || !img.complete || img.naturalWidth === 0) {
        report.faults.push(when + ': no decoded image');
        return undefined;
      }
      const label = document.querySelector('[data-testid="vision-overlay"] text.classification')?.textContent ?? '';
      [canvas.width, canvas.height] = [img.naturalWidth, img.naturalHeight];
      const context = canvas.getContext('2d');
      context.drawImage(img, 0, 0);
      const [r, g, b] = context.getImageData(canvas.width >> 1, canvas.height >> 1, 1, 1).data;
      const drawn = r > g && r > b ? 'red' : g > b ? 'green' : 'blue';
      if (drawn !== label.replace(/ \\d+%$/, '')) report.faults.push(when + ': ' + drawn + ' drawn, labelled "' + label + '"');
      return drawn;
    };
    let src = document.querySelector('img[alt="image of pics"]')?.src;
    let finished = false;
    const finish = () => {
      finished = true;
      observer.disconnect();
      resolve(report);
    };
    const observer = new MutationObserver(() => {
      const now = document.querySelector('img[alt="image of pics"]')?.src;
      if (now === src) return;
      src = now;
      report.frames++;
      report.colours.push(look('frame ' + report.frames) ?? 'none');
      if (report.frames >= 6) finish();
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['src'] });
    const between = () => {
      if (finished) return;
      look('between frames ' + report.frames + ' and ' + (report.frames + 1));
      requestAnimationFrame(between);
    };
    requestAnimationFrame(between);
    setTimeout(finish, 60000);
  })`)) as { frames: number; colours: string[]; faults: string[] };
  t.deepEqual(watched.faults.slice(0, 10), [], `${watched.faults.length} faults; every frame shown decoded, labelled with its own colour`);
  t.true(watched.frames >= 2 && new Set(watched.colours).size >= 2, `the camera moved on: ${JSON.stringify(watched)}`);
});

/** The few canvas members the check uses (this file is type-checked without the DOM library). */
interface HTMLCanvasElementLike {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
