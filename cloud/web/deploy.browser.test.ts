// Issue 36, train to deploy in one click, in a real browser (headless Debian chromium) against the real
// platform-cloud: from a completed job, "Deploy to machine" shows the diff of the chosen part's config
// (the model's package, an onnx_cpu ML model service and an mlmodel vision service on the part's camera)
// and saves exactly that config (read back over gRPC); a config saved elsewhere after the diff was shown
// is not overwritten; deploying the same model again changes nothing.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../core/serving/testing/eventually.js';
import { TrainingStatus } from '../client/ml-training-client.js';
import { scriptPackage } from '../mltraining/testing/script-package.js';
import { shapeImages } from '../mltraining/testing/shapes.js';
import { cloudFixture, type CloudFixture } from '../mltraining/testing/training-fixture.js';
import { call, partClients, type PartClients } from '../parts/testing/part-clients.js';
import { signedInView } from '../testing/signed-in-view.js';
import { instantTrainer } from './testing-trainers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots land in the ignored test-output folder. */
const SHOTS = join(ROOT, '.platform-test', 'web');

let fx: CloudFixture;
let owner: PartClients;

test.before(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  mkdirSync(SHOTS, { recursive: true });
  fx = await cloudFixture();
  owner = await partClients(fx.cloud.address, fx.ownerKey);
});

test.after.always(async () => {
  owner?.close();
  await fx?.close();
});

const getPart = async () => (await call(owner.app.getRobotPart.bind(owner.app), { id: fx.partId }, owner.md)).part!;
const setConfig = (robotConfig: Record<string, unknown>) => call(owner.app.updateRobotPart.bind(owner.app), { id: fx.partId, robotConfig }, owner.md);

test.serial('Deploy to machine shows the config diff, saves exactly it, and never overwrites a config saved meanwhile', async (t) => {
  const camera = { name: 'cam', api: 'core:component:camera', model: 'fake' };
  await setConfig({ components: [camera] });
  const { datasetId } = await fx.uploadDataset('deploy-shapes', shapeImages(2));
  await fx.training.uploadTrainingScript(
    fx.orgId,
    'acme:instant',
    '1.0.0',
    'train.sh',
    await scriptPackage({ 'train.sh': { content: instantTrainer, mode: 0o755 } }),
  );
  const jobId = await fx.training.submitCustomTrainingJob(fx.orgId, datasetId, 'acme:instant', '1.0.0', 'shapes', 'v1', {});
  const done = await eventually(
    () => fx.training.getTrainingJob(jobId),
    (j) => [TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED].includes(j.status),
    { what: 'the job to finish', timeoutMs: 120_000 },
  );
  t.is(done.status, TrainingStatus.TRAINING_STATUS_COMPLETED, JSON.stringify(done.errorStatus));

  const page = await signedInView(t, fx.cloud.webUrl, fx.ownerKey, 'Training');
  await page.getByTestId('jobs').getByRole('link', { name: 'shapes' }).click();
  const deploy = page.getByTestId('deploy');
  await deploy.waitFor();
  const partName = (await getPart()).name;
  // The part's camera is offered for the vision service once the part's config is read.
  await eventually(
    () => deploy.locator('select[name=deployCamera]').inputValue(),
    (v) => v === 'cam',
    { what: 'the camera chosen' },
  );
  t.is(await deploy.locator('input[name=deployName]').inputValue(), 'shapes');
  await deploy.getByRole('button', { name: 'Show changes' }).click();
  const diff = deploy.getByTestId('deploy-diff');
  await diff.waitFor();
  const lines = (await diff.innerText()).split('\n').filter((l) => l !== '');
  const removed = lines.filter((l) => l.startsWith('- '));
  const added = lines.filter((l) => l.startsWith('+ ')).map((l) => l.slice(2).trim());
  // Lines are only added: nothing of the part's config goes.
  t.deepEqual(removed, []);
  for (const line of [
    '"packages": [',
    `"package": "${fx.orgId}/shapes",`,
    '"version": "v1",',
    '"type": "ml_model"',
    '"name": "shapes-model",',
    '"model": "onnx_cpu",',
    '"model_path": "${packages.shapes}/model.onnx",',
    '"label_path": "${packages.shapes}/labels.txt"',
    '"model": "mlmodel",',
    '"mlmodel_name": "shapes-model",',
    '"camera_name": "cam"',
  ]) {
    t.true(added.includes(line), `the diff adds ${line}`);
  }
  await page.screenshot({ path: join(SHOTS, 'cloud-deploy-diff.png'), fullPage: true });

  // Someone saves the part's config after the diff was shown: the page does not overwrite it, and shows
  // the diff against the new config instead.
  const thermo = { name: 'thermo', api: 'core:component:sensor', model: 'fake' };
  await setConfig({ components: [camera, thermo] });
  const revision = (await getPart()).configRevision;
  await deploy.getByRole('button', { name: `Save to ${partName}` }).click();
  t.regex(await deploy.getByTestId('deploy-error').innerText(), new RegExp(`^The part's config changed \\(revision ${revision - 1} is now ${revision}\\)`));
  t.is((await getPart()).configRevision, revision, 'nothing saved');
  await eventually(
    () => diff.innerText(),
    (d) => d.includes('@@ -10 +10 @@') && d.includes('"core:component:sensor"'),
    { what: 'the diff against the new config' },
  );

  await deploy.getByRole('button', { name: `Save to ${partName}` }).click();
  t.regex(await deploy.getByTestId('deploy-saved').innerText(), new RegExp(`^Deployed shapes v1 to ${partName}: config revision ${revision + 1}\\.$`));
  const saved = await getPart();
  t.deepEqual(saved.robotConfig, {
    components: [camera, thermo],
    packages: [{ name: 'shapes', package: `${fx.orgId}/shapes`, version: 'v1', type: 'ml_model' }],
    services: [
      {
        name: 'shapes-model',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: '${packages.shapes}/model.onnx', label_path: '${packages.shapes}/labels.txt' },
      },
      { name: 'shapes', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'shapes-model', camera_name: 'cam' } },
    ],
  });

  // Deploying the same model again: no change, nothing to save.
  await deploy.getByRole('button', { name: 'Show changes' }).click();
  await deploy.getByText('none, it already runs this model.').waitFor();
  t.true(await deploy.getByRole('button', { name: `Save to ${partName}` }).isDisabled());
  // A name taken by something else is refused naming the field.
  await deploy.locator('input[name=deployName]').fill('thermo model');
  await deploy.getByRole('button', { name: 'Show changes' }).click();
  t.regex(await deploy.getByTestId('deploy-error').innerText(), /^name "thermo model": must be 1-64 of/);
});
