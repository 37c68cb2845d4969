// The data browser's query, training and machines views in a real browser (headless Debian chromium)
// against the real platform-cloud: a SQL query shows its rows (and a chart), a refused query shows the
// cloud's words; a training job submitted on the page shows its progress and curves; the config editor
// saves a config (checked over gRPC) and shows a validation error with its path and rule.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../core/serving/testing/eventually.js';
import { TrainingStatus } from '../client/ml-training-client.js';
import { cloudFixture, type CloudFixture } from '../mltraining/testing/training-fixture.js';
import { shapeImages } from '../mltraining/testing/shapes.js';
import { call, partClients, type PartClients } from '../parts/testing/part-clients.js';
import { adminJson } from '../testing/spawn-cloud.js';
import { signedInView } from '../testing/signed-in-view.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots land in the ignored test-output folder; cloud/web/README.md shows copies of them. */
const SHOTS = join(ROOT, '.platform-test', 'web');

let fx: CloudFixture;
let key: { id: string; key: string };
let rover: { machine_id: string; part_id: string; part_secret: string };
const clients: PartClients[] = [];

test.before(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  mkdirSync(SHOTS, { recursive: true });
  fx = await cloudFixture();
  key = await adminJson(fx.cloud.dataDir, ['key', 'create', '--org', fx.orgId, '--role', 'owner']);
  rover = await adminJson(fx.cloud.dataDir, ['machine', 'create', '--org', fx.orgId, '--name', 'rover']);
});

test.after.always(async () => {
  for (const c of clients) c.close();
  await fx?.close();
});

const signedIn = (t: { teardown(fn: () => Promise<void>): void }, view: string) => signedInView(t, fx.cloud.webUrl, key, view);

test.serial('a SQL query shows its rows as a table and a chart; a refused query shows the cloud’s own words', async (t) => {
  const times = [0, 1, 2].map((i) => new Date(Date.UTC(2026, 0, 1, 12, 0, i * 10)));
  await fx.owner.dataClient.tabularDataCaptureUpload(
    [21.5, 22, 23.25].map((temperature) => ({ readings: { temperature } })),
    fx.partId,
    'sensor',
    'thermo',
    'Readings',
    times.map((d) => [d, d] as [Date, Date]),
  );
  const page = await signedIn(t, 'SQL');
  await page
    .getByLabel('SQL query')
    .fill('SELECT time_received, component_name, data.readings.temperature::DOUBLE AS temperature FROM readings ORDER BY time_received');
  await page.getByRole('button', { name: 'Run' }).click();
  const table = page.getByTestId('sql-results-table');
  await table.waitFor();
  t.is(await page.getByTestId('sql-results-count').innerText(), '3 rows');
  t.deepEqual(await table.locator('thead th').allInnerTexts(), ['time_received', 'component_name', 'temperature']);
  t.deepEqual(await table.locator('tbody tr td:nth-child(3)').allInnerTexts(), ['21.5', '22', '23.25']);
  t.is(await table.locator('tbody tr td:nth-child(1)').first().innerText(), '2026-01-01T12:00:00.000Z');
  await page.screenshot({ path: join(SHOTS, 'cloud-sql-table.png'), fullPage: true });

  await page.getByRole('button', { name: 'Chart' }).click();
  const chart = page.getByTestId('sql-results-chart');
  await chart.waitFor();
  t.regex(await chart.innerText(), /temperature \(3\)[\s\S]*against time_received/);
  const points = (await chart.locator('polyline').getAttribute('points'))!.split(' ');
  t.is(points.length, 3);
  // Time runs left to right and the highest temperature is drawn highest (smallest y).
  const [p0, , p2] = points.map((p) => p.split(',').map(Number));
  t.true(p0[0] < p2[0] && p2[1] < p0[1]);
  await page.screenshot({ path: join(SHOTS, 'cloud-sql-chart.png'), fullPage: true });

  // The same refusal through the TypeScript client and on the page.
  const bad = 'SELECT nosuchcolumn FROM readings';
  const refused = await t.throwsAsync(fx.owner.dataClient.tabularDataBySQL(fx.orgId, bad));
  const detail = refused.message.replace(/^\d+ [A-Z_]+: /, '');
  await page.getByLabel('SQL query').fill(bad);
  await page.getByRole('button', { name: 'Run' }).click();
  const shown = await page.getByTestId('sql-error').innerText();
  t.true(shown.includes(detail), `${shown} should hold ${detail}`);
  t.regex(shown, /gRPC status 3/);
});

test.serial('tabular data shows as a table and a time-series chart, page by page', async (t) => {
  const page = await signedIn(t, 'Tabular data');
  await page.getByLabel('Component name').fill('thermo');
  await page.getByLabel('Per page').fill('2');
  await page.getByLabel('Order').selectOption('oldest');
  await page.getByRole('button', { name: 'Apply' }).click();
  const table = page.getByTestId('tabular-results-table');
  const temperatures = () => table.locator('tbody tr td:nth-child(5)').allInnerTexts();
  // The view's first load (newest first, 50 per page) may still be on show: wait for Apply's own page.
  const firstPage = await eventually(temperatures, (v) => v.join() === '21.5,22', { what: "Apply's first page" });
  t.deepEqual(await table.locator('thead th').allInnerTexts(), ['time_received', 'component_name', 'component_type', 'robot_name', 'readings.temperature']);
  t.deepEqual(firstPage, ['21.5', '22']);
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByTestId('tabular-page').getByText('page 2').waitFor();
  await table.getByText('23.25').waitFor();
  t.deepEqual(await temperatures(), ['23.25']);
  t.true(await page.getByRole('button', { name: 'Next page' }).isDisabled());
  await page.getByRole('button', { name: 'Previous page' }).click();
  await table.getByText('21.5').waitFor();
  await page.getByRole('button', { name: 'Chart' }).click();
  const chart = page.getByTestId('tabular-results-chart');
  t.regex(await chart.innerText(), /readings\.temperature \(2\)[\s\S]*against time_received/);
  await page.screenshot({ path: join(SHOTS, 'cloud-tabular-chart.png'), fullPage: true });
});

test.serial('an MQL pipeline shows its rows; stages that are not an array are refused naming query', async (t) => {
  const page = await signedIn(t, 'MQL');
  await page.getByLabel(/MQL pipeline/).fill('[{"$match": {"component_name": "thermo"}}, {"$count": "n"}]');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByTestId('mql-results-table').waitFor();
  t.deepEqual(await page.getByTestId('mql-results-table').locator('tbody td').allInnerTexts(), ['3']);
  await page.getByLabel(/MQL pipeline/).fill('{"$match": {}}');
  await page.getByRole('button', { name: 'Run' }).click();
  t.regex(await page.getByTestId('mql-error').innerText(), /^query: must be a JSON array of stages/);
});

test.serial('a training job submitted on the page shows its progress, loss and metric curves and logs, and completes', async (t) => {
  const { datasetId } = await fx.uploadDataset('shapes', shapeImages(24, { colours: ['red', 'blue'], size: 16 }));
  const page = await signedIn(t, 'Training');
  await page.getByLabel('Dataset').selectOption(datasetId);
  await page.getByLabel('Model type').selectOption({ label: 'single label classification' });
  await page.getByLabel(/^Labels/).fill('red, blue');
  await page.getByLabel('Model name').fill('shapes');
  await page.getByLabel('Model version').fill('v1');
  await page.getByLabel(/^Arguments/).fill('image_size=16\nepochs=3');
  let logReads = 0;
  page.on('request', (r) => void (r.url().endsWith('/GetTrainingJobLogs') && logReads++));
  await page.getByRole('button', { name: 'Submit' }).click();
  const detail = page.getByTestId('job-detail');
  await detail.getByTestId('job-progress').waitFor({ timeout: 240_000 });
  t.regex(await detail.getByTestId('job-progress').innerText(), /^epoch \d+\/\d+, loss [\d.]+, accuracy [\d.]+/);
  await page.screenshot({ path: join(SHOTS, 'cloud-training-progress.png'), fullPage: true });
  await detail.getByText('completed').waitFor({ timeout: 240_000 });
  // The job's last line is logged just after its final status: the page reads the log on after it, and shows it.
  const readsAtFinish = logReads;
  await eventually(
    () => logReads,
    (n) => n >= readsAtFinish + 2,
    { what: 'two log reads after the job finished' },
  );
  await detail
    .getByTestId('job-logs')
    .getByText(/stored model shapes version v1: /)
    .waitFor();
  const [job] = await fx.training.listTrainingJobs(fx.orgId, TrainingStatus.TRAINING_STATUS_UNSPECIFIED);
  t.is(job.status, TrainingStatus.TRAINING_STATUS_COMPLETED);
  t.is(job.modelName, 'shapes');
  t.is(job.modelVersion, 'v1');
  t.is(job.tags.join(','), 'red,blue');
  t.deepEqual(job.arguments, { image_size: '16', epochs: '3' });
  // One curve point per epoch the job logged, in both charts.
  const epochs = (await fx.training.getTrainingJobLogs(job.id)).logs.filter((l) => /^epoch \d+\//.test(l.message)).length;
  t.true(epochs >= 1);
  for (const id of ['loss-curve', 'metric-curve']) {
    t.is((await detail.getByTestId(id).locator('polyline').getAttribute('points'))!.split(' ').length, epochs, id);
  }
  t.regex(await detail.getByTestId('job-logs').innerText(), /epoch 1\/\d+: loss/);
  await detail
    .getByTestId('artefact')
    .getByRole('button', { name: /Download model\.onnx/ })
    .waitFor();
  // A model file comes through the streamed DownloadModelArtefact, byte for byte what the client gets.
  const downloading = page.waitForEvent('download');
  await detail
    .getByTestId('artefact')
    .getByRole('button', { name: /Download labels\.txt/ })
    .click();
  const downloaded = await downloading;
  t.is(downloaded.suggestedFilename(), 'labels.txt');
  const onPage = await readFile((await downloaded.path())!);
  t.deepEqual(new Uint8Array(onPage), new Uint8Array(await fx.training.downloadModelArtefact(fx.orgId, 'shapes', 'v1', 'labels.txt')));
  t.regex(onPage.toString(), /red|blue/);
  await page.screenshot({ path: join(SHOTS, 'cloud-training-done.png'), fullPage: true });
});

test.serial(
  'the config editor saves a config (read back over gRPC) and shows a refused one’s errors with path and rule; parts show online and logs',
  async (t) => {
    const owner = await partClients(fx.cloud.address, key);
    const part = await partClients(fx.cloud.address, { partId: rover.part_id, secret: rover.part_secret });
    clients.push(owner, part);
    await call(
      part.robot.reportStatus.bind(part.robot),
      { id: rover.part_id, runtimeVersion: '1.2.3', machineState: 'running', configRevision: 0, configError: '', notReady: [], resourceCount: 0 },
      part.md,
    );
    await call(
      part.robot.log.bind(part.robot),
      { id: rover.part_id, logs: [{ time: new Date(), level: 'warn', loggerName: 'platform.kernel', message: 'battery low', fields: {} }] },
      part.md,
    );

    const page = await signedIn(t, 'Machines');
    const button = page.getByTestId('machines').locator(`[data-part="${rover.part_id}"]`);
    await button.waitFor();
    t.regex(await button.innerText(), /rover-main ● online 1\.2\.3/);
    await button.click();
    const editor = page.getByLabel(/^Machine config/);
    await editor.waitFor();
    const good = { components: [{ name: 'thermo', api: 'core:component:sensor', model: 'fake' }] };
    await editor.fill(JSON.stringify(good, null, 2));
    await page.getByRole('button', { name: 'Save config' }).click();
    t.is(await page.getByTestId('config-saved').innerText(), 'Saved revision 1.');
    const stored = await call(owner.app.getRobotPart.bind(owner.app), { id: rover.part_id }, owner.md);
    t.deepEqual(stored.part?.robotConfig, good);
    t.is(stored.part?.configRevision, 1);
    await page.getByTestId('config-history').locator('tbody tr').first().waitFor();
    t.regex(await page.getByTestId('config-history').innerText(), new RegExp(`1\\s+\\S+ \\S+\\s+API key ${key.id}`));

    await editor.fill(
      JSON.stringify({
        components: [
          ...good.components,
          { name: 'thermo', api: 'core:component:sensor', model: 'fake' },
          { name: 'gauge', api: 'core:component:sensor', model: 'nosuch' },
        ],
      }),
    );
    await page.getByRole('button', { name: 'Save config' }).click();
    const errors = page.getByTestId('config-errors');
    await errors.waitFor();
    const text = await errors.innerText();
    t.regex(text, /components\[1\]\.name "thermo": duplicate name, already used by components\[0\]/);
    t.regex(text, /components\[2\]\.model "nosuch": unknown model for core:component:sensor/);
    await page.screenshot({ path: join(SHOTS, 'cloud-config-editor.png'), fullPage: true });
    t.is((await call(owner.app.getRobotPart.bind(owner.app), { id: rover.part_id }, owner.md)).part?.configRevision, 1, 'nothing saved');

    await page.getByRole('button', { name: 'Logs', exact: true }).click();
    await page
      .getByTestId('part-logs')
      .getByText(/battery low/)
      .waitFor();
    // Following: an entry logged now arrives through TailRobotPartLogs.
    // The stream may not be open yet when the first entry is logged: log again until one arrives.
    await page.getByLabel('Follow new entries').check();
    const logs = page.getByTestId('part-logs');
    for (let attempt = 1; !(await logs.innerText()).includes('motor stalled'); attempt++) {
      if (attempt > 30) t.fail('no tailed entry arrived');
      await call(
        part.robot.log.bind(part.robot),
        { id: rover.part_id, logs: [{ time: new Date(), level: 'error', loggerName: 'platform.kernel', message: `motor stalled ${attempt}`, fields: {} }] },
        part.md,
      );
      await logs
        .getByText(/motor stalled/)
        .first()
        .waitFor({ timeout: 2000 })
        .catch(() => undefined);
    }
    t.regex(await page.getByTestId('part-logs').innerText(), /ERROR platform\.kernel motor stalled[\s\S]*WARN {2}platform\.kernel battery low/);
    await page.screenshot({ path: join(SHOTS, 'cloud-part-logs.png'), fullPage: true });
  },
);
