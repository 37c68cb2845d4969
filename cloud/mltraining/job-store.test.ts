import test from 'ava';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobStore } from './job-store.js';
import type { TrainingJob } from './training-job.js';

const job = (id: string): TrainingJob => ({
  id,
  organizationId: 'org',
  datasetId: 'd',
  modelName: 'm',
  modelVersion: 'v',
  isCustomJob: false,
  registryItemId: '',
  registryItemVersion: '',
  status: 'PENDING',
  createdOn: '2024-01-01T00:00:00.000Z',
  lastModified: '2024-01-01T00:00:00.000Z',
  syncedModelId: '',
  tags: ['a'],
  arguments: {},
  validationMetrics: {},
});

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const root = await mkdtemp(join(tmpdir(), 'job-store-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  return root;
}

test('saves are durable and ordered; the last snapshot wins; unreadable files are reported, not fatal', async (t) => {
  const root = await setup(t);
  const store = new JobStore(root);
  const a = job('a');
  const saves = [];
  for (const status of ['IN_PROGRESS', 'CANCELING', 'CANCELED'] as const) saves.push(store.save({ ...a, status }));
  await Promise.all(saves);
  await appendFile(join(root, 'jobs', 'broken.json'), '{"id": ');
  const bad: string[] = [];
  const loaded = await new JobStore(root).loadAll((file) => bad.push(file));
  t.deepEqual(
    loaded.map((j) => [j.id, j.status]),
    [['a', 'CANCELED']],
  );
  t.deepEqual(bad, ['broken.json']);
  await store.remove('a');
  t.deepEqual(await new JobStore(root).loadAll(() => undefined), []);
});

test('a log keeps its entries in order, stops at its cap with a notice, and survives a torn last line', async (t) => {
  const root = await setup(t);
  const store = new JobStore(root, 3);
  for (let i = 1; i <= 5; i++) void store.appendLog('a', { level: 'info', time: 't', message: `line ${i}` });
  await store.closeLog('a');
  const entries = await store.readLog('a');
  t.deepEqual(
    entries.map((e) => e.message),
    ['line 1', 'line 2', 'line 3', 'log truncated after 3 entries'],
  );
  await appendFile(join(root, 'jobs', 'a.logs.jsonl'), '{"level":"info","ti');
  t.is((await store.readLog('a')).length, 4);
  t.true((await readFile(join(root, 'jobs', 'a.logs.jsonl'), 'utf8')).startsWith('{"level":"info","time":"t","message":"line 1"}'));
});
