// The ML training service's settings from the environment of `platform-cloud serve` and `platform-cloud
// worker` (README "Settings"):
//   PLATFORM_TRAINING_CONCURRENCY      jobs trained at the same time (default 2)
//   PLATFORM_TRAINING_CONCURRENCY_PER_ORG  jobs of one organization trained at the same time (default 1)
//   PLATFORM_TRAINING_PYTHON           python with torch (default /usr/bin/python3 when present)
//   PLATFORM_TRAINING_THREADS          PyTorch threads per built-in job (default: CPUs / concurrency)
//   PLATFORM_TRAINING_TIMEOUT_S        wall-clock limit of a built-in job (default 21600)
//   PLATFORM_TRAINING_CUSTOM_TIMEOUT_S wall-clock limit of a custom job (default 7200)
//   PLATFORM_TRAINING_CUSTOM_CPU_S     CPU-time limit of a custom job (default none)
//   PLATFORM_TRAINING_CUSTOM_MEMORY_MB address-space limit of a custom job (default 8192)
//   PLATFORM_TRAINING_EPOCHS           default epochs of built-in jobs (default: chosen from the dataset's size)
//   PLATFORM_TRAINING_MEMORY_MB        address-space limit of a built-in job (default 16384)
//   PLATFORM_TRAINING_MAX_PENDING_PER_ORG     pending jobs of one organization (default 100)
//   PLATFORM_TRAINING_JOB_MAX_TAKES    scale-out: runs of one job that may end with their worker stopped
//                                      (kill -9, OOM); the next takeover ends the job FAILED (default 3)
// Training-script registry (script-registry.ts):
//   PLATFORM_TRAINING_SCRIPT_MAX_FILES        entries of one package (default 10000)
//   PLATFORM_TRAINING_SCRIPT_MAX_UNPACKED_MB  one package unpacked (default 512)
//   PLATFORM_TRAINING_SCRIPTS_PER_ORG         script versions of one organization (default 100)
//   PLATFORM_TRAINING_SCRIPT_BYTES_PER_ORG_MB unpacked bytes of one organization's scripts (default 2048)
// Confinement (trainer-sandbox.ts, README "Confinement"):
//   PLATFORM_TRAINING_BWRAP            path of bubblewrap (default /usr/bin/bwrap)
//   PLATFORM_TRAINING_UNCONFINED       1: built-in jobs run unconfined when bubblewrap is unavailable (custom: never)
//   PLATFORM_TRAINING_PROCESSES        processes and threads per trainer, RLIMIT_NPROC (default 512)
//   PLATFORM_TRAINING_FILE_MB          largest file a trainer may write, RLIMIT_FSIZE (default 4096)
//   PLATFORM_TRAINING_TMP_MB           size of a trainer's private /tmp, a tmpfs (default 256)
//   PLATFORM_TRAINING_DISK_MB          what one job folder may hold, measured every 2 s (default 20480)
//   PLATFORM_TRAINING_DISK_FILES       files and folders one job folder may hold (default 200000)
//   PLATFORM_TRAINING_SANDBOX_DIR      job folders when the cloud runs as root (default <tmp>/platform-training-<hash>)
import { envNumber, envWholeNumber } from '../../core/serving/env.js';
import { defaultConcurrency, type MLTrainingOptions } from './ml-training.js';
import { defaultRegistryLimits } from './script-registry.js';

/** Everything of MLTrainingOptions that the environment sets. */
export function trainingSettingsFromEnv(): Omit<MLTrainingOptions, 'root' | 'store' | 'dataSource' | 'dispatch' | 'logger'> {
  const customMemoryMb = envNumber('PLATFORM_TRAINING_CUSTOM_MEMORY_MB', 8192, 64)!;
  return {
    concurrency: Math.floor(envNumber('PLATFORM_TRAINING_CONCURRENCY', defaultConcurrency, 1)),
    perOrganizationConcurrency: Math.floor(envNumber('PLATFORM_TRAINING_CONCURRENCY_PER_ORG', 1, 1)),
    python: process.env.PLATFORM_TRAINING_PYTHON || undefined,
    trainerThreads: process.env.PLATFORM_TRAINING_THREADS ? Math.floor(envNumber('PLATFORM_TRAINING_THREADS', 1, 1)!) : undefined,
    builtinLimits: {
      wallSeconds: envNumber('PLATFORM_TRAINING_TIMEOUT_S', 21_600, 1),
      memoryBytes: envNumber('PLATFORM_TRAINING_MEMORY_MB', 16_384, 64) * 2 ** 20,
    },
    customLimits: {
      wallSeconds: envNumber('PLATFORM_TRAINING_CUSTOM_TIMEOUT_S', 7_200, 1),
      cpuSeconds: envNumber('PLATFORM_TRAINING_CUSTOM_CPU_S', undefined, 1),
      memoryBytes: customMemoryMb * 2 ** 20,
    },
    // Unset, the trainer chooses epochs from the dataset's size (see TRAINING-DEFAULTS.md).
    builtinDefaults: process.env.PLATFORM_TRAINING_EPOCHS ? { epochs: String(Math.floor(envNumber('PLATFORM_TRAINING_EPOCHS', 20, 1)!)) } : {},
    sandbox: {
      bwrapPath: process.env.PLATFORM_TRAINING_BWRAP || undefined,
      processes: Math.floor(envNumber('PLATFORM_TRAINING_PROCESSES', 512, 16)),
      fileSizeBytes: envNumber('PLATFORM_TRAINING_FILE_MB', 4096, 1) * 2 ** 20,
      tmpBytes: envNumber('PLATFORM_TRAINING_TMP_MB', 256, 1) * 2 ** 20,
      rootJobsFolder: process.env.PLATFORM_TRAINING_SANDBOX_DIR || undefined,
    },
    registryLimits: {
      maxEntries: Math.floor(envNumber('PLATFORM_TRAINING_SCRIPT_MAX_FILES', defaultRegistryLimits.maxEntries, 1)),
      maxUnpackedBytes: envNumber('PLATFORM_TRAINING_SCRIPT_MAX_UNPACKED_MB', defaultRegistryLimits.maxUnpackedBytes / 2 ** 20, 1) * 2 ** 20,
      maxScriptsPerOrg: Math.floor(envNumber('PLATFORM_TRAINING_SCRIPTS_PER_ORG', defaultRegistryLimits.maxScriptsPerOrg, 1)),
      maxBytesPerOrg: envNumber('PLATFORM_TRAINING_SCRIPT_BYTES_PER_ORG_MB', defaultRegistryLimits.maxBytesPerOrg / 2 ** 20, 1) * 2 ** 20,
    },
    disk: {
      maxBytes: envNumber('PLATFORM_TRAINING_DISK_MB', 20_480, 1) * 2 ** 20,
      maxEntries: Math.floor(envNumber('PLATFORM_TRAINING_DISK_FILES', 200_000, 100)),
    },
    maxPendingPerOrg: Math.floor(envNumber('PLATFORM_TRAINING_MAX_PENDING_PER_ORG', 100, 1)),
    maxJobTakes: envWholeNumber('PLATFORM_TRAINING_JOB_MAX_TAKES', 3),
    allowUnconfinedBuiltins: process.env.PLATFORM_TRAINING_UNCONFINED === '1',
  };
}
