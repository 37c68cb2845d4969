// A job that was running (or stopping) when the embedded cloud stopped, crash or kill -9 included: at the
// next start its trainer's leftovers are ended and the job is finished with the reason, since nothing
// runs it any more. A job that was being canceled ends CANCELED, as its owner asked; any other, FAILED
// with UNAVAILABLE, to be submitted again.
import type { JobStore } from './job-store.js';
import { killOrphans } from './orphan-trainers.js';
import type { TrainingJob } from './training-job.js';

export async function endInterrupted(jobs: JobStore, job: TrainingJob, logger?: { warn(obj: object, msg?: string): void }): Promise<void> {
  killOrphans(job.id, job.pid);
  const canceled = job.status === 'CANCELING';
  const now = new Date().toISOString();
  const message = canceled
    ? 'canceled by request (the cloud restarted while the job was stopping)'
    : 'the cloud stopped while the job was running (crash or kill); submit it again';
  Object.assign(job, {
    status: canceled ? 'CANCELED' : 'FAILED',
    errorStatus: { code: canceled ? 1 : 14, message },
    trainingEnded: now,
    lastModified: now,
    pid: undefined,
  });
  await jobs.appendLog(job.id, { level: canceled ? 'info' : 'error', time: now, message });
  await jobs.closeLog(job.id);
  await jobs.save(job);
  logger?.warn({ jobId: job.id, status: job.status }, 'training job interrupted by a restart');
}
