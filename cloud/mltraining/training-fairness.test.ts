// Hostile tenant, issue 27 finding 9 (queue): one organization's jobs must not hold every other
// organization's. Turns go round-robin between organizations, and each runs at most
// perOrganizationConcurrency jobs at once.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MLTraining, type MLTrainingOptions } from './ml-training.js';
import { MemoryDataSource } from './testing/memory-data-source.js';
import { jobProcesses } from './testing/processes.js';
import { scriptPackage } from './testing/script-package.js';
import { blockerScript, writerScript } from './testing/scripts.js';
import { shapeImages } from './testing/shapes.js';
import { waitFor } from '../../core/serving/testing/eventually.js';
import { TrainingQueue } from './training-queue.js';

async function setup(t: { teardown(fn: () => Promise<void>): void }, options: Partial<MLTrainingOptions>) {
  const root = await mkdtemp(join(tmpdir(), 'mltraining-fair-'));
  const source = new MemoryDataSource();
  const datasets = { a: source.addShapes('org-a', shapeImages(3)), b: source.addShapes('org-b', shapeImages(3)) };
  const training = new MLTraining({ root, dataSource: source, killGraceMs: 500, ...options });
  await training.start();
  t.teardown(async () => {
    await training.stop();
    await rm(root, { recursive: true, force: true });
  });
  for (const org of ['org-a', 'org-b']) {
    for (const [id, content] of [
      ['blocker', blockerScript],
      ['writer', writerScript],
    ]) {
      await training.registry.upload({
        organizationId: org,
        registryItemId: id,
        version: '1',
        entrypoint: 'train.sh',
        package: await scriptPackage({ 'train.sh': { content, mode: 0o755 } }),
      });
    }
  }
  const submit = (org: 'a' | 'b', script: string, version: string) =>
    training.submitCustomTrainingJob({
      organizationId: `org-${org}`,
      datasetId: datasets[org],
      registryItemId: script,
      registryItemVersion: '1',
      modelName: 'm',
      modelVersion: version,
    });
  const finished = (id: string) =>
    waitFor(`job ${id} to finish`, async () => {
      const job = await training.getTrainingJob(id);
      return ['COMPLETED', 'FAILED', 'CANCELED'].includes(job.status) && job;
    });
  return { training, submit, finished };
}

test("with one slot, another organization's job runs before the rest of a flooding organization's", async (t) => {
  const { training, submit, finished } = await setup(t, { concurrency: 1 });
  const a1 = await submit('a', 'blocker', 'v1');
  const a2 = await submit('a', 'writer', 'v2');
  const a3 = await submit('a', 'writer', 'v3');
  const b1 = await submit('b', 'writer', 'v1');
  await waitFor("A's first job to run", () => jobProcesses(a1, 'sleep').length > 0);
  await training.cancelTrainingJob(a1);
  const jobs = await Promise.all([a2, a3, b1].map(finished));
  const started = (id: string) => jobs.find((j) => j.id === id)!.trainingStarted!;
  for (const job of jobs) t.is(job.status, 'COMPLETED', JSON.stringify(job.errorStatus));
  t.true(started(b1) < started(a2), `B started ${started(b1)}, A's second ${started(a2)}`);
  t.true(started(a2) < started(a3));
});

test('an organization runs one job at a time; the second slot goes to another organization', async (t) => {
  const { training, submit, finished } = await setup(t, { concurrency: 2 });
  const a1 = await submit('a', 'blocker', 'v1');
  const a2 = await submit('a', 'blocker', 'v2');
  const b1 = await submit('b', 'blocker', 'v1');
  await waitFor("B's job to run beside A's", () => jobProcesses(b1, 'sleep').length > 0 && jobProcesses(a1, 'sleep').length > 0);
  t.is((await training.getTrainingJob(a2)).status, 'PENDING');
  await training.cancelTrainingJob(a1);
  await waitFor("A's second job to run once its first is gone", () => jobProcesses(a2, 'sleep').length > 0);
  t.is((await training.getTrainingJob(b1)).status, 'IN_PROGRESS');
  await training.cancelTrainingJob(a2);
  await training.cancelTrainingJob(b1);
  for (const id of [a1, a2, b1]) t.is((await finished(id)).status, 'CANCELED');
});

test('the queue takes turns between organizations and respects both limits', async (t) => {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const queue = new TrainingQueue({ concurrency: 2, perOrganization: 1 }, (id) => {
    started.push(id);
    return new Promise<void>((resolve) => ends.set(id, resolve));
  });
  for (const id of ['a1', 'a2', 'a3']) queue.push(id, 'a');
  for (const id of ['b1', 'b2']) queue.push(id, 'b');
  queue.push('c1', 'c');
  t.deepEqual(started, ['a1', 'b1']);
  t.true(queue.remove('a3'));
  t.false(queue.remove('a1')); // running, not waiting
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  ends.get('a1')!();
  await settle();
  t.deepEqual(started, ['a1', 'b1', 'c1']); // C had not had a turn; A waits for its next
  ends.get('b1')!();
  await settle();
  t.deepEqual(started, ['a1', 'b1', 'c1', 'a2']);
  ends.get('c1')!();
  await settle();
  t.deepEqual(started, ['a1', 'b1', 'c1', 'a2', 'b2']);
  t.deepEqual(queue.size, { waiting: 0, running: 2 });
  t.throws(() => new TrainingQueue({ concurrency: 1, perOrganization: 0 }, async () => undefined), { instanceOf: RangeError });
});

test('an organization keeps a bounded number of pending jobs; a script a pending job needs cannot be deleted', async (t) => {
  const { training, submit, finished } = await setup(t, { concurrency: 1, maxPendingPerOrg: 2 });
  const a1 = await submit('a', 'blocker', 'v1');
  await waitFor("A's first job to run", () => jobProcesses(a1, 'sleep').length > 0);
  const a2 = await submit('a', 'writer', 'v2');
  const a3 = await submit('a', 'writer', 'v3');
  const flood = await t.throwsAsync(submit('a', 'writer', 'v4'));
  t.is((flood as { code?: number }).code, status.RESOURCE_EXHAUSTED);
  t.regex(flood!.message, /already has 2 pending training jobs, the limit \(PLATFORM_TRAINING_MAX_PENDING_PER_ORG\)/);
  const b1 = await submit('b', 'writer', 'v1'); // B is not held by A's limit
  const needed = await t.throwsAsync(training.deleteTrainingScript('org-a', 'writer', '1'));
  t.is((needed as { code?: number }).code, status.FAILED_PRECONDITION);
  t.regex(needed!.message, /needed by pending job/);
  await training.cancelTrainingJob(a2);
  await training.cancelTrainingJob(a3);
  await training.deleteTrainingScript('org-a', 'writer', '1');
  t.deepEqual(
    (await training.registry.list('org-a')).map((s) => s.registryItemId),
    ['blocker'],
  );
  await training.cancelTrainingJob(a1);
  t.is((await finished(b1)).status, 'COMPLETED');
});
