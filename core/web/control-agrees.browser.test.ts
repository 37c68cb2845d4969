// Issue 36, defect 4: the control page agrees with the hardware, in a real browser (headless Debian
// chromium) against the real platform-server, checked through ordinary gRPC clients: the motor slider
// follows the motor after Stop and StopAll; Set GPIO refuses a value that is not a level (the pin keeps
// its level) and says what it set; the board's name field offers the pins, readers and interrupts of
// the config.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BoardServiceClient } from '../../gen/platform/component/board/v1/board.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../server/testing/grpc.js';
import { eventually, spawnRuntime } from '../server/testing/spawn-runtime.js';
import { launchChromium, webUrlOf } from '../serving/testing/chromium.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const components = [
  {
    name: 'b',
    api: 'core:component:board',
    model: 'fake',
    attributes: { analogs: [{ name: 'pot', pin: '32', value: 512 }], digital_interrupts: [{ name: 'ticks', pin: '36' }] },
  },
  { name: 'm', api: 'core:component:motor', model: 'gpio', attributes: { board: 'b', pins: { pwm: '10', dir: '11' }, max_rpm: 100 } },
];

test.before(() => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
});

test.serial('the motor slider, Set GPIO and the board’s names agree with the hardware and the config', async (t) => {
  const runtime = await spawnRuntime({ components });
  t.teardown(() => runtime.stop());
  const board = new BoardServiceClient(runtime.address, insecure());
  t.teardown(() => board.close());
  const duty = async () => (await call(board, 'pwm', { name: 'b', pin: '10' })).dutyPct as number;
  const level = async (pin: string) => (await call(board, 'getGpio', { name: 'b', pin })).high as boolean;
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1200 } });
  const failed: string[] = [];
  page.on('response', (r) => void (r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`)));
  await page.goto(webUrlOf(runtime.output()));
  const slider = page.getByLabel('power of m');
  await slider.waitFor();
  // The page names its icon, which is served (browsers asked for /favicon.ico and got a 404).
  const icon = await fetch(new URL((await page.locator('link[rel="icon"]').getAttribute('href'))!, webUrlOf(runtime.output())));
  t.is(icon.status, 200);
  t.is(icon.headers.get('content-type'), 'image/svg+xml');

  // Stop: the motor stops and the slider says so.
  await slider.fill('-75');
  t.is(await eventually(duty, (d) => d === 0.75), 0.75);
  await page.getByTestId('motor-m').filter({ hasText: 'powered -75%' }).waitFor();
  await page.locator('[data-resource="m"]').getByRole('button', { name: 'Stop', exact: true }).click();
  t.is(await eventually(duty, (d) => d === 0), 0);
  t.is(
    await eventually(
      () => slider.inputValue(),
      (v) => v === '0',
    ),
    '0',
  );
  // StopAll, from the header: the slider follows the motor, which the page did not stop itself.
  await slider.fill('-75');
  await page.getByTestId('motor-m').filter({ hasText: 'powered -75%' }).waitFor();
  await page.getByRole('button', { name: 'StopAll' }).click();
  t.is(await eventually(duty, (d) => d === 0), 0);
  t.is(
    await eventually(
      () => slider.inputValue(),
      (v) => v === '0',
    ),
    '0',
  );
  await page.locator('[data-resource="m"]').getByText('Power 0%').waitFor();

  // Set GPIO: a level is 1/0 or high/low; anything else is refused naming the field, and the pin keeps its level.
  const card = page.locator('[data-resource="b"]');
  await call(board, 'setGpio', { name: 'b', pin: '12', high: true });
  await card.getByLabel('pin of b').fill('12');
  for (const typed of ['abc', '']) {
    await card.getByLabel('value for b').fill(typed);
    await card.getByRole('button', { name: 'Set GPIO (1/0)' }).click();
    // The refusal of the value typed before may still be on show: wait for this value's.
    const refusal = `value: Set GPIO needs 1 or 0 (high or low), got ${JSON.stringify(typed)}`;
    t.is(
      await eventually(
        () => card.getByRole('alert').innerText(),
        (text) => text === refusal,
        { what: refusal },
      ),
      refusal,
    );
    t.true(await level('12'), `the pin stays high after ${JSON.stringify(typed)}`);
  }
  await card.getByLabel('value for b').fill('0');
  await card.getByRole('button', { name: 'Set GPIO (1/0)' }).click();
  await card.getByTestId('board-result-b').getByText('GPIO 12 set low').waitFor();
  t.false(await level('12'));
  t.is(await card.getByRole('alert').count(), 0, 'the refusal is gone after a good set');
  // A PWM duty out of range is refused too; a good one is confirmed.
  await card.getByLabel('value for b').fill('7');
  await card.getByRole('button', { name: 'Set PWM (0–1)' }).click();
  t.regex(await card.getByRole('alert').innerText(), /^value: Set PWM needs a duty cycle from 0 to 1, got "7"/);
  await card.getByLabel('value for b').fill('0.25');
  await card.getByRole('button', { name: 'Set PWM (0–1)' }).click();
  await card.getByTestId('board-result-b').getByText('PWM duty of 12 set to 0.25').waitFor();
  t.is((await call(board, 'pwm', { name: 'b', pin: '12' })).dutyPct, 0.25);

  // The names the config gives: the reader, the interrupt, their pins and the motor's pins on this board.
  const options = card.getByTestId('board-names-b').locator('option');
  await eventually(
    () => options.count(),
    (n) => n > 0,
  );
  const offered = await options.evaluateAll((os) => os.map((o) => `${o.getAttribute('value')}=${o.getAttribute('label')}`));
  t.deepEqual(offered, [
    'pot=analog reader on pin 32',
    'ticks=digital interrupt on pin 36',
    '32=pin of pot',
    '36=pin of ticks',
    '10=pwm pin of m',
    '11=dir pin of m',
  ]);
  // A reader picked from the list reads.
  await card.getByLabel('pin of b').fill('pot');
  await card.getByRole('button', { name: 'Read analog' }).click();
  await card
    .getByTestId('board-result-b')
    .getByText(/^analog: .*512/)
    .waitFor();
  // A call with no name is refused on the page, offering the config's names.
  await card.getByLabel('pin of b').fill('');
  await card.getByRole('button', { name: 'Interrupt count' }).click();
  t.deepEqual(failed, [], 'no request of the page failed');
  t.regex(await card.getByRole('alert').innerText(), /^pin: name the digital interrupt \(the config lists pot, ticks, 32, 36, 10, 11\)/);
});

test.serial('sensor readings show as rounded values, each with a plot of its last minute on its own axis', async (t) => {
  const runtime = await spawnRuntime({
    components: [
      { name: 'climate', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.12345678901, humidity_pct: 40 } } },
    ],
  });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(webUrlOf(runtime.output()));
  const values = page.getByTestId('values-climate');
  await values.waitFor();
  t.deepEqual(await values.locator('th').allInnerTexts(), ['temperature_c', 'humidity_pct']);
  t.deepEqual(await values.locator('td.value').allInnerTexts(), ['21.12', '40']);
  t.false((await page.getByTestId('readings-climate').innerText()).includes('21.1234'), 'no 14 decimals');
  // The plot fills as readings arrive; a changed reading moves the temperature's axis, not the humidity's.
  const plot = page.getByTestId('plot-climate-temperature_c');
  await eventually(
    async () => Number(await plot.getAttribute('data-points')),
    (n) => n >= 3,
  );
  await call(sensors, 'doCommand', { name: 'climate', command: { set: { temperature_c: 25, humidity_pct: 40 } } });
  await plot.locator('text', { hasText: /^25$/ }).waitFor();
  t.deepEqual(await plot.locator('text').allTextContents(), ['25', '21.12']);
  t.deepEqual(await page.getByTestId('plot-climate-humidity_pct').locator('text').allTextContents(), ['40', '40']);
});

test.serial('a depth camera’s image shows through a colour map with its range, not as a near-black grey', async (t) => {
  const runtime = await spawnRuntime({
    components: [{ name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 160, height_px: 120 } }],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  await page.goto(webUrlOf(runtime.output()));
  const legend = page.getByTestId('depth-legend-cam');
  await legend.waitFor();
  t.regex(await legend.innerText(), /^depth colour map: red \d+\.\d\d m \(near\) to blue \d+\.\d\d m \(far\); black: no depth$/);
  // The pixels drawn: most are coloured (channels far apart) and bright, where the grey PNG was dark grey.
  // (A string: this file is type-checked without the DOM library.) The legend names the frame decoded, while the
  // <img> may already be loading the next one (naturalWidth 0 until it has): the probe waits for a decoded image.
  const probe = `(() => {
    const img = document.querySelector('img[alt="image of cam"]');
    if (!img.complete || img.naturalWidth === 0) return undefined;
    const canvas = document.createElement('canvas');
    [canvas.width, canvas.height] = [img.naturalWidth, img.naturalHeight];
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      if (Math.max(r, g, b) - Math.min(r, g, b) > 60 && Math.max(r, g, b) > 100) coloured++;
    }
    return { coloured, pixels: data.length / 4 };
  })()`;
  const drawn = (await eventually(
    () => page.evaluate(probe),
    (d) => d !== undefined,
  )) as { coloured: number; pixels: number };
  t.true(drawn.coloured > drawn.pixels / 2, `${drawn.coloured} of ${drawn.pixels} pixels coloured`);
});

test.serial('the stream chooser shows the camera’s streams: depth, colour, or none fetched', async (t) => {
  const runtime = await spawnRuntime({
    components: [{ name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 160, height_px: 120 } }],
  });
  t.teardown(() => runtime.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  // The mime type each GetImage asks for (its protobuf body holds the string as is), recorded by the page
  // itself as it calls fetch, so the list is read in the page's own order and in step with what it shows.
  // (It was built from the browser's request events, which reach the test on their own schedule; once, on a
  // loaded machine, the last one seen asked for the default stream after the colour image had shown.)
  await page.addInitScript(`(() => {
    const asked = (window.askedImages = []);
    const fetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (String(input).endsWith('/GetImage')) {
        const body = init && init.body ? new TextDecoder('latin1').decode(init.body) : '';
        asked.push(/image\\/[\\w.+-]+/.exec(body)?.[0] ?? 'default');
      }
      return fetch(input, init);
    };
  })()`);
  const asked = async () => (await page.evaluate('window.askedImages')) as string[];
  await page.goto(webUrlOf(runtime.output()));
  const chooser = page.getByLabel('stream of cam');
  const image = page.locator('img[alt="image of cam"]');
  await page.getByTestId('depth-legend-cam').waitFor();
  // The camera's own list (GetProperties): depth and colour, besides the default and none.
  await eventually(
    () => chooser.locator('option').allInnerTexts(),
    (o) => o.length === 4,
  );
  t.deepEqual(await chooser.locator('option').allInnerTexts(), ['default', 'depth', 'colour', 'none (not fetched)']);
  t.true((await asked()).every((m) => m === 'default'));

  await chooser.selectOption({ label: 'colour' });
  await eventually(
    () => image.getAttribute('data-mime'),
    (m) => m === 'image/png',
    { what: 'the colour image' },
  );
  await page.getByTestId('depth-legend-cam').waitFor({ state: 'detached' });
  const afterColour = await asked();
  t.is(afterColour.at(-1), 'image/png', `the page's last GetImage calls: ${afterColour.slice(-6).join(', ')}`);

  await chooser.selectOption({ label: 'depth' });
  await page.getByTestId('depth-legend-cam').waitFor();
  t.is(await image.getAttribute('data-mime'), 'image/vnd.platform.depth+png');

  await chooser.selectOption({ label: 'none (not fetched)' });
  await image.waitFor({ state: 'detached' });
  await page.getByText('The image of cam is not fetched.').waitFor();
  // Nothing is fetched while none is chosen: no GetImage over several poll periods.
  const before = (await asked()).length;
  await page.waitForTimeout(2000);
  t.is((await asked()).length, before);
});
