// TabularDataBySQL: a user's SELECT over their organisation's `readings`, inspected, scoped and limited.
// Every path that runs user SQL (gRPC and the PostgreSQL endpoint) comes through queryTable, so the
// limits live here: text size first, then admission (a turn among the running queries), then one time
// limit over inspection, planning and execution together.
import type { DuckDBConnection } from '@duckdb/node-api';
import { invalidArgument } from '../../../core/serving/status-error.js';
import type { QueryAdmission } from '../admission.js';
import { schemaStatement } from './schema-statements.js';
import { inspectStatement } from './statement-inspector.js';
import { createReadingsView } from './readings-view.js';
import { interruptible, readLimited, type LimitedResult } from './limited-run.js';
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.js';
import { inSpan } from '../../../core/serving/telemetry/tracing.js';

/**
 * Opens a new connection to a DuckDB holding `main.tabular_data` with (at least) the organization's
 * readings; the caller closes it. Embedded: the cloud's one DuckDB (every organization; the TEMP view
 * scopes). Scale-out: a DuckDB of the query's own with only that organization's rows
 * (cloud/query/sealed/scale-out-readings.ts).
 */
export type ConnectionSource = ((organizationId: string, options?: ConnectOptions) => Promise<DuckDBConnection>) & {
  /**
   * Brings a long-lived connection's data up to date (scale-out: it holds a copy of the unsealed rows).
   * Absent when the connection reads the live table itself (embedded).
   */
  refresh?: (conn: DuckDBConnection) => Promise<void>;
};

export interface ConnectOptions {
  /**
   * The connection also serves the organization's pipeline sinks (main.query_data_pipeline_sink), which the
   * PostgreSQL endpoint shows as relations. The embedded DuckDB always has them.
   */
  sinks?: boolean;
}

/** Refuses query text over the limit before anything parses it. */
export function checkTextSize(text: string, limits: Pick<QueryLimits, 'maxTextBytes'>, field: string): void {
  // A string of n UTF-16 units has at least n UTF-8 bytes: the length alone refuses most oversized texts.
  if (text.length > limits.maxTextBytes || Buffer.byteLength(text, 'utf8') > limits.maxTextBytes) {
    throw invalidArgument(`${field}: the query text is longer than the ${limits.maxTextBytes}-byte limit (PLATFORM_QUERY_MAX_TEXT_BYTES)`);
  }
}

const noTurn = () => {};

export class SqlSandbox {
  readonly limits: QueryLimits;

  constructor(
    private readonly connect: ConnectionSource,
    limits: Partial<QueryLimits> = {},
    private readonly admission?: QueryAdmission,
  ) {
    this.limits = { ...DEFAULT_QUERY_LIMITS, ...limits };
  }

  /**
   * A turn among the running user queries for `organizationId` (the same admission as queryTable); call the
   * returned function when the work is done. Without an admission, a turn is always free.
   */
  admit(organizationId: string): Promise<() => void> {
    return this.admission ? this.admission.acquire(organizationId) : Promise.resolve(noTurn);
  }

  /** Runs `sql` as `organizationId`. Throws INVALID_ARGUMENT or PERMISSION_DENIED naming the broken rule. */
  async query(organizationId: string, sql: string): Promise<Record<string, unknown>[]> {
    return (await this.queryTable(organizationId, sql)).docs;
  }

  /**
   * A connection that holds the organisation's private TEMP view `readings`, for a PostgreSQL session that
   * runs many statements (prepared, streamed, suspended) on one connection. The caller must pass every
   * statement through inspectStatement first, and closes the connection when the session ends.
   */
  async openSession(organizationId: string): Promise<DuckDBConnection> {
    const viewSql = createReadingsView(organizationId);
    const conn = await this.connect(organizationId, { sinks: true });
    try {
      await conn.run(viewSql);
      return conn;
    } catch (err) {
      conn.closeSync();
      throw err;
    }
  }

  /** Brings a session connection (openSession) up to date before a statement runs on it; see ConnectionSource.refresh. */
  async refreshSession(conn: DuckDBConnection): Promise<void> {
    await this.connect.refresh?.(conn);
  }

  /** Like query, and also names the result columns (the PostgreSQL endpoint describes them). */
  async queryTable(organizationId: string, sql: string): Promise<LimitedResult> {
    if (typeof sql !== 'string' || sql.trim() === '') throw invalidArgument('sql_query: must not be empty');
    checkTextSize(sql, this.limits, 'sql_query');
    const viewSql = createReadingsView(organizationId);
    // SHOW TABLES / DESCRIBE readings: a fixed read-only statement of ours answers them (schema-statements.ts).
    const schema = schemaStatement(sql);
    const run = async () => {
      // The time limit covers getting the connection too (scale-out: fetching segments and the tail).
      const deadline = Date.now() + this.limits.timeoutMs;
      const conn = await this.connect(organizationId);
      try {
        // A private connection per query: the TEMP view is visible to nobody else, and an interrupt on
        // timeout cannot hit anyone else's statement.
        const usage = { bytes: 0 };
        return await interruptible(
          conn,
          { ...this.limits, deadline },
          'sql_query',
          async () => {
            if (!schema) await inspectStatement(conn, sql);
            await conn.run(viewSql);
            return readLimited(conn, schema ?? sql, this.limits, 'sql_query', usage);
          },
          () => usage.bytes,
        );
      } finally {
        conn.closeSync();
      }
    };
    // A span when tracing is on (--otlp-endpoint): a child of the call's span, the wait for a turn included.
    return inSpan('sql query', { 'db.system': 'duckdb' }, () => (this.admission ? this.admission.run(organizationId, run) : run()));
  }
}
