// Resource limits for one sandboxed query. Defaults keep a result inside gRPC's default 4 MiB message.
export interface QueryLimits {
  /** The statement is interrupted after this many milliseconds. */
  timeoutMs: number;
  /** More result rows than this is refused. */
  maxRows: number;
  /** More result bytes (BSON-encoded) than this is refused. */
  maxBytes: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { timeoutMs: 10_000, maxRows: 100_000, maxBytes: 4_000_000 };
