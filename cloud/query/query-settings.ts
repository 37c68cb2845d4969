// The query engine's limits and pools as the environment sets them (the variables are listed in
// extension.ts and LIMITS.md). One place, because two programs build the engine: `platform-cloud serve`
// (extension.ts) and, for data pipeline windows in the scale-out mode, `platform-cloud worker`
// (pipelines/window-worker-process.ts); a window must meet the same limits wherever it runs.
import { envNumber } from '../../core/serving/env.js';
import { QueryAdmission } from './admission.js';
import { MemoryGuard } from './memory-guard.js';
import { MingoPool } from './mql/mingo-pool.js';
import type { MqlOptions } from './mql/mql-runner.js';
import { resultBytesFromEnv } from './result-size.js';
import type { QueryLimits } from './sql/limits.js';

export function queryLimitsFromEnv(): QueryLimits {
  return {
    timeoutMs: envNumber('PLATFORM_QUERY_TIMEOUT_MS', 10_000, 1),
    maxRows: envNumber('PLATFORM_QUERY_MAX_ROWS', 100_000, 1),
    maxBytes: resultBytesFromEnv(),
    maxTextBytes: envNumber('PLATFORM_QUERY_MAX_TEXT_BYTES', 64 * 1024, 16),
    memory: new MemoryGuard(
      envNumber('PLATFORM_QUERY_RSS_LIMIT_MB', 1280, 64) * 2 ** 20,
      undefined,
      undefined,
      envNumber('PLATFORM_QUERY_RSS_MIN_GROWTH_MB', 64, 1) * 2 ** 20,
    ),
  };
}

export function queryAdmissionFromEnv(): QueryAdmission {
  return new QueryAdmission({
    maxTotal: envNumber('PLATFORM_QUERY_CONCURRENCY', 3, 1),
    maxPerOrg: envNumber('PLATFORM_QUERY_CONCURRENCY_PER_ORG', 2, 1),
    maxWaitMs: envNumber('PLATFORM_QUERY_MAX_WAIT_MS', 10_000, 0),
    maxQueuedPerOrg: envNumber('PLATFORM_QUERY_MAX_QUEUED_PER_ORG', 32, 0),
  });
}

export function mingoPoolFromEnv(): MingoPool {
  return new MingoPool({ maxHeapMb: envNumber('PLATFORM_MQL_HEAP_MB', 512, 32), processes: envNumber('PLATFORM_MQL_PROCESSES', 2, 1) });
}

/** The MqlRunner's options: the limits, the admission and the scan bounds. */
export function mqlOptionsFromEnv(limits: QueryLimits, admission: QueryAdmission): MqlOptions {
  return {
    limits,
    admission,
    hotStorageMs: envNumber('PLATFORM_QUERY_HOT_STORAGE_HOURS', 24, 0) * 3600_000,
    maxScanRows: envNumber('PLATFORM_QUERY_MAX_SCAN_ROWS', 2_000_000, 1),
  };
}
