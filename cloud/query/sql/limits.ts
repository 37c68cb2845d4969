// Resource limits for one user query (SQL, MQL, pipelines, the PostgreSQL endpoint). The defaults keep a
// result inside gRPC's default 4 MiB message; the environment settings are read in ../extension.ts and
// documented in ../LIMITS.md.
import type { MemoryGuard } from '../memory-guard.js';

export interface QueryLimits {
  /** The whole query (inspection, planning, execution, conversion) is interrupted after this many ms. */
  timeoutMs: number;
  /** More result rows than this is refused. */
  maxRows: number;
  /** More result bytes (BSON-encoded) than this is refused. */
  maxBytes: number;
  /** Longer query text (UTF-8 bytes; for MQL, the BSON size of the stages) is refused before parsing. */
  maxTextBytes: number;
  /** Interrupts the query when the process' memory passes its limit; none in unit tests. */
  memory?: MemoryGuard;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { timeoutMs: 10_000, maxRows: 100_000, maxBytes: 4_000_000, maxTextBytes: 64 * 1024 };
