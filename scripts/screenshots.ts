// npm run screenshots: pictures of the pages a team lives in, so anyone can look at them without starting
// a browser by hand. Runs the real programs from dist/ (npm run build first) in a temporary folder:
// platform-server with a board, a motor, a sensor and a camera; platform-cloud with readings, images and
// a training job that is still running; then headless Chromium saves, into .platform-test/screenshots/
// (ignored by git, or SCREENSHOTS_DIR):
//   control-page.png       the runtime's control page (resources, a motor driven at 40 %, readings, camera)
//   data-browser.png       the cloud's data view (image grid with thumbnails)
//   sql-console.png        the SQL console with the table's columns and a query's rows
//   training-mid-run.png   a training job opened while it runs: progress, curves and its log so far
//   deploy-diff.png        "Deploy to machine" of a completed job: the diff of the part's config
//   machines.png           the Machines view, the rover online with its control page link
//   control-page-cloud.png the rover's control page opened from there, over WebRTC through the cloud
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { callAdminChannel } from '../cloud/admin/channel.js';
import { createCloudClient } from '../cloud/client/cloud-client.js';
import { TrainingStatus } from '../cloud/client/ml-training-client.js';
import { scriptPackage } from '../cloud/mltraining/testing/script-package.js';
import { call, partClients } from '../cloud/parts/testing/part-clients.js';
import { noisyPng } from '../cloud/web/testing-images.js';
import { instantTrainer } from '../cloud/web/testing-trainers.js';
import { launchChromium, webUrlOf } from '../core/serving/testing/chromium.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OUT = process.env.SCREENSHOTS_DIR ?? join(ROOT, '.platform-test', 'screenshots');
const SERVER_MAIN = fileURLToPath(new URL('../core/server/main.js', import.meta.url));
const CLOUD_MAIN = fileURLToPath(new URL('../cloud/server/main.js', import.meta.url));

/** Starts a program and resolves with its output once `ready` matches it. */
function run(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (ready.test(output)) resolve({ child, output });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${output}`)));
  });
}

/** A training script that reports an epoch every two seconds, for a job that is still running. */
const slowTrainer = `#!/bin/sh
echo "loading 12 images"
i=0
while :; do
  i=$((i+1))
  loss=$(awk "BEGIN { print 1.2 / ($i + 1) }")
  acc=$(awk "BEGIN { print 1 - 0.5 / ($i + 1) }")
  echo "{\\"event\\": \\"progress\\", \\"epoch\\": $i, \\"total_epochs\\": 50, \\"loss\\": $loss, \\"metric_name\\": \\"accuracy\\", \\"metric\\": $acc, \\"images_per_second\\": 40, \\"elapsed_seconds\\": $((i * 2))}"
  sleep 2
done
`;

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'platform-screenshots-'));
mkdirSync(OUT, { recursive: true });
let browser: Browser | undefined;
try {
  browser = await launchChromium();
  await controlPage(browser);
  await cloudPages(browser);
  console.log(
    `screenshots in ${OUT}: control-page.png, data-browser.png, sql-console.png, training-mid-run.png, deploy-diff.png, machines.png, control-page-cloud.png`,
  );
} finally {
  await browser?.close();
  for (const c of children) c.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}

async function controlPage(browser: Browser): Promise<void> {
  const config = {
    network: { bind_address: 'localhost:0' },
    components: [
      { name: 'board1', api: 'core:component:board', model: 'fake', attributes: { analogs: [{ name: 'pot', pin: '32', value: 512 }] } },
      { name: 'left', api: 'core:component:motor', model: 'gpio', attributes: { board: 'board1', pins: { pwm: '10', dir: '11' }, max_rpm: 100 } },
      { name: 'thermometer', api: 'core:component:sensor', model: 'fake', attributes: { readings: { temperature_c: 21.5, humidity_pct: 40 }, noise: 0.2 } },
      { name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 320, height_px: 240 } },
    ],
  };
  writeFileSync(join(dir, 'machine.json'), JSON.stringify(config));
  const { output } = await run([SERVER_MAIN, '-config', join(dir, 'machine.json'), '-ftdc=false'], /web page on \S+\n/);
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(webUrlOf(output));
  await page.locator('html[data-ready="1"]').waitFor();
  await page.getByLabel('power of left').fill('40');
  await page.getByTestId('motor-left').filter({ hasText: 'powered 40%' }).waitFor();
  await page.getByAltText('image of cam').waitFor();
  await page.screenshot({ path: join(OUT, 'control-page.png'), fullPage: true });
  await page.close();
}

async function cloudPages(browser: Browser): Promise<void> {
  const dataDir = join(dir, 'cloud');
  const { output } = await run([CLOUD_MAIN, 'serve', '--data-dir', dataDir, '--port', '0'], /platform-cloud serving \S+\n/, {
    ...process.env,
    PLATFORM_QUERY_PG_PORT: '0',
  });
  const address = /platform-cloud serving (\S+)\n/.exec(output)![1];
  const webUrl = /platform-cloud web page on (\S+)\n/.exec(output)![1];
  const admin = async <T>(action: string, args: Record<string, unknown>) => (await callAdminChannel(dataDir, action, args))!.result as T;
  const org = (await admin<{ id: string }>('org.create', { name: 'demo' })).id;
  const machine = await admin<{ part_id: string; part_secret: string }>('machine.create', { org, name: 'rover' });
  const key = await admin<{ id: string; key: string }>('key.create', { org, role: 'owner' });
  const owner = createCloudClient({ serviceHost: address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  try {
    const data = owner.dataClient;
    const start = Date.now() - 10 * 60_000;
    const times = Array.from({ length: 60 }, (_, i) => new Date(start + i * 10_000));
    await data.tabularDataCaptureUpload(
      times.map((_, i) => ({ readings: { temperature_c: 21 + Math.sin(i / 6), humidity_pct: 40 + i / 10 } })),
      machine.part_id,
      'core:component:sensor',
      'thermometer',
      'Readings',
      times.map((t) => [t, t] as [Date, Date]),
    );
    const images: string[] = [];
    for (let i = 0; i < 12; i++) {
      const now = new Date();
      const id = await data.binaryDataCaptureUpload(
        noisyPng(320, 240, i + 1),
        machine.part_id,
        'core:component:camera',
        'cam',
        'ReadImage',
        '.png',
        [now, now],
        [i % 2 ? 'red' : 'blue'],
      );
      await data.addBoundingBoxToImageById(id, i % 2 ? 'red' : 'blue', 0.2, 0.2, 0.6, 0.7);
      images.push(id);
    }
    const datasetId = await data.createDataset('shapes', org);
    await data.addBinaryDataToDatasetByIds(images, datasetId);
    const training = owner.mlTrainingClient;
    await training.uploadTrainingScript(
      org,
      'demo:slow-trainer',
      '1.0.0',
      'train.sh',
      await scriptPackage({ 'train.sh': { content: slowTrainer, mode: 0o755 } }),
    );
    const jobId = await training.submitCustomTrainingJob(org, datasetId, 'demo:slow-trainer', '1.0.0', 'shapes', 'v1', {});

    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(webUrl);
    await page.getByLabel('API key id').fill(key.id);
    await page.getByLabel('API key', { exact: true }).fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('signed-in').waitFor();
    await page.locator('html[data-ready="1"]').waitFor();
    await page.waitForFunction('document.querySelectorAll("img").length >= 12 && [...document.querySelectorAll("img")].every((i) => i.complete)');
    await page.screenshot({ path: join(OUT, 'data-browser.png'), fullPage: true });

    const nav = (name: string) => page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
    await nav('SQL');
    await page.getByTestId('sql-schema').getByText('component_type').waitFor();
    await page.getByLabel('Example queries').selectOption({ label: 'rows per component' });
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByTestId('sql-results-table').waitFor();
    await page.screenshot({ path: join(OUT, 'sql-console.png'), fullPage: true });

    // The job has run a few epochs before it is opened: the page shows its history, then follows it.
    while ((await training.getTrainingJobLogs(jobId)).logs.filter((l) => /^epoch /.test(l.message)).length < 4) await new Promise((r) => setTimeout(r, 500));
    await nav('Training');
    await page.getByTestId('jobs').getByRole('link', { name: 'shapes' }).click();
    await page.getByTestId('job-progress').waitFor();
    await page.getByTestId('loss-curve').waitFor();
    await page.screenshot({ path: join(OUT, 'training-mid-run.png'), fullPage: true });
    await training.cancelTrainingJob(jobId);

    // A completed job deployed to the rover, whose config has a camera: the diff before saving.
    const app = await partClients(address, key);
    try {
      const robotConfig = { components: [{ name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { width_px: 320, height_px: 240 } }] };
      await call(app.app.updateRobotPart.bind(app.app), { id: machine.part_id, robotConfig }, app.md);
    } finally {
      app.close();
    }
    await training.uploadTrainingScript(
      org,
      'demo:instant',
      '1.0.0',
      'train.sh',
      await scriptPackage({ 'train.sh': { content: instantTrainer, mode: 0o755 } }),
    );
    const doneId = await training.submitCustomTrainingJob(org, datasetId, 'demo:instant', '1.0.0', 'shapes-detector', 'v1', {});
    for (;;) {
      const job = await training.getTrainingJob(doneId);
      if (job.status === TrainingStatus.TRAINING_STATUS_COMPLETED) break;
      if (job.status === TrainingStatus.TRAINING_STATUS_FAILED) throw new Error(`the deploy job failed: ${job.errorStatus?.message}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await page.getByTestId('jobs').getByRole('link', { name: 'shapes-detector' }).click();
    const deploy = page.getByTestId('deploy');
    await page.waitForFunction('document.querySelector("select[name=deployCamera]")?.value === "cam"');
    await deploy.getByRole('button', { name: 'Show changes' }).click();
    await deploy.getByTestId('deploy-diff').waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(OUT, 'deploy-diff.png'), fullPage: true });

    // The rover online (its config, the camera, comes from the cloud), then its control page from the
    // Machines view, over WebRTC through the cloud.
    const credentials = { cloud: { id: machine.part_id, secret: machine.part_secret, app_address: address }, network: { bind_address: 'localhost:0' } };
    writeFileSync(join(dir, 'rover.json'), JSON.stringify(credentials));
    mkdirSync(join(dir, 'rover-online'));
    await run([SERVER_MAIN, '-config', join(dir, 'rover.json'), '-ftdc=false'], /web page on \S+\n/, {
      ...process.env,
      PLATFORM_ONLINE_DIR: join(dir, 'rover-online'),
    });
    await nav('Machines');
    await page.getByTestId('machines').getByText('● online').waitFor({ timeout: 60_000 });
    await page.screenshot({ path: join(OUT, 'machines.png'), fullPage: true });
    const [control] = await Promise.all([page.context().waitForEvent('page'), page.locator(`a[data-control="${machine.part_id}"]`).click()]);
    await control.setViewportSize({ width: 1280, height: 1000 });
    await control.getByTestId('transport').waitFor({ timeout: 60_000 });
    await control.getByAltText('image of cam').waitFor();
    await control.getByTestId('pointcloud-cam').and(control.locator(':not([data-points="0"])')).waitFor();
    await control.screenshot({ path: join(OUT, 'control-page-cloud.png'), fullPage: true });
  } finally {
    owner.close();
  }
}
