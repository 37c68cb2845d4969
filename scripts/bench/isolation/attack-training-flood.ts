// Issue 27 finding 9: the attacker floods training. It keeps uploading a 1.2 MB training-script archive of
// 200,000 empty files (the registry once unpacked all of them, 204 s, and the other organizations' reads
// took 4.5 s meanwhile), and fills the training queue with custom jobs that each sleep
// BENCH_TRAINING_JOB_S seconds, up to its pending-job limit. Besides the harness's read and upload
// timings, the quiet organization submits one custom training job once the flood is queued; the time
// until that job runs is its wait (with one slot it waits for at most the attacker's running job).
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { shapeImages } from '../../../cloud/mltraining/testing/shapes.js';
import { scriptPackage } from '../../../cloud/mltraining/testing/script-package.js';
import { TrainingStatus } from '../../../cloud/client/ml-training-client.js';
import type { Attack, Tenant } from './harness.js';

const FILES = Number(process.env.BENCH_FLOOD_FILES ?? 200_000);
const JOB_S = Number(process.env.BENCH_TRAINING_JOB_S ?? 20);

/** A tar.gz of `count` empty files: 512-byte headers, built in memory. */
function floodArchive(count: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const block = Buffer.alloc(512);
    new Header({ path: `f/${i}`, mode: 0o644, size: 0, type: 'File', mtime: new Date(0) }).encode(block, 0);
    blocks.push(block);
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}

const sleeper = `#!/bin/sh
for a in "$@"; do case "$a" in --model_output_directory=*) OUT="\${a#*=}" ;; esac; done
sleep ${JOB_S}
printf 'model' > "$OUT/model.bin"
`;

/** A one-image dataset and an uploaded custom script for a tenant. */
async function prepare(tenant: Tenant, script: string): Promise<string> {
  const data = tenant.client.dataClient;
  const now = new Date();
  const [image] = shapeImages(1);
  const imageId = await data.binaryDataCaptureUpload(image.png, tenant.partId, 'camera', 'cam', 'ReadImage', '.png', [now, now], image.labels);
  const datasetId = await data.createDataset('bench', tenant.orgId);
  await data.addBinaryDataToDatasetByIds([imageId], datasetId);
  await tenant.client.mlTrainingClient.uploadTrainingScript(
    tenant.orgId,
    'bench:sleeper',
    '1',
    'train.sh',
    await scriptPackage({ 'train.sh': { content: script, mode: 0o755 } }),
  );
  return datasetId;
}

const codeOf = (err: unknown) => String((err as { code?: number }).code);

function trainingFlood(name: string, concurrency: string): Attack {
  return {
    name,
    finding: 'issue 27 #9',
    describe: `${FILES.toLocaleString('en')}-file script archive uploaded in a loop, and the training queue filled with ${JOB_S} s custom jobs (PLATFORM_TRAINING_CONCURRENCY=${concurrency}); the quiet org's own job's wait`,
    cloudEnv: { PLATFORM_TRAINING_CONCURRENCY: concurrency },
    async start({ attacker, quiet }) {
      const archive = floodArchive(FILES);
      const attackerDataset = await prepare(attacker, sleeper);
      const quietDataset = await prepare(quiet, sleeper.replace(`sleep ${JOB_S}`, 'true'));
      const ml = attacker.client.mlTrainingClient;
      const outcomes = new Map<string, number>();
      const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      const uploadMs: number[] = [];
      let queued = 0;
      // Fill the queue up to the attacker's pending limit.
      for (let i = 0; ; i++) {
        try {
          await ml.submitCustomTrainingJob(attacker.orgId, attackerDataset, 'bench:sleeper', '1', 'flood', `v${i}`);
          queued += 1;
        } catch (err) {
          count(`submit ${codeOf(err)}`);
          break;
        }
      }
      let stop = false;
      const uploads = (async () => {
        for (let i = 0; !stop; i++) {
          const started = Date.now();
          try {
            await ml.uploadTrainingScript(attacker.orgId, 'bench:flood', `${i}`, 'f/0', archive);
            count('upload accepted');
          } catch (err) {
            count(`upload ${codeOf(err)}`);
          }
          uploadMs.push(Date.now() - started);
        }
      })();
      // The quiet organization's job, submitted behind the flood.
      const submitted = Date.now();
      const quietJob = await quiet.client.mlTrainingClient.submitCustomTrainingJob(quiet.orgId, quietDataset, 'bench:sleeper', '1', 'quiet', 'v1');
      const waited = (async () => {
        for (;;) {
          const job = await quiet.client.mlTrainingClient.getTrainingJob(quietJob);
          if (job.status !== TrainingStatus.TRAINING_STATUS_PENDING) return { ms: Date.now() - submitted, status: TrainingStatus[job.status] };
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      return async () => {
        stop = true;
        await uploads;
        const wait = await Promise.race([waited, new Promise<undefined>((r) => setTimeout(() => r(undefined), (JOB_S + 30) * 1000))]);
        const sorted = [...uploadMs].sort((a, b) => a - b);
        const p50 = sorted[Math.floor(sorted.length / 2)] ?? NaN;
        return (
          `archive ${(archive.length / 1e6).toFixed(2)} MB uploaded ${uploadMs.length} times, p50 ${p50} ms, max ${sorted.at(-1)} ms; ` +
          `${queued} jobs queued; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; ` +
          `quiet org's job ${wait ? `left PENDING after ${(wait.ms / 1000).toFixed(1)} s (${wait.status})` : 'still PENDING'}`
        );
      };
    },
  };
}

export const trainingFlood2 = trainingFlood('training-flood', '2');
export const trainingFlood1 = trainingFlood('training-flood-1slot', '1');
