// TabularDataBySQL: a user's SELECT over their organisation's `readings`, inspected, scoped and limited.
import type { DuckDBConnection } from '@duckdb/node-api';
import { inspectStatement } from './statement-inspector.js';
import { createReadingsView } from './readings-view.js';
import { runLimitedTable, type LimitedResult } from './limited-run.js';
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from './limits.js';

/** Opens a new connection to the database holding `tabular_data`; the caller closes it. */
export type ConnectionSource = () => Promise<DuckDBConnection>;

export class SqlSandbox {
  readonly limits: QueryLimits;

  constructor(
    private readonly connect: ConnectionSource,
    limits: Partial<QueryLimits> = {},
  ) {
    this.limits = { ...DEFAULT_QUERY_LIMITS, ...limits };
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
    const conn = await this.connect();
    try {
      await conn.run(viewSql);
      return conn;
    } catch (err) {
      conn.closeSync();
      throw err;
    }
  }

  /** Like query, and also names the result columns (the PostgreSQL endpoint describes them). */
  async queryTable(organizationId: string, sql: string): Promise<LimitedResult> {
    const viewSql = createReadingsView(organizationId);
    const conn = await this.connect();
    try {
      await inspectStatement(conn, sql);
      // A private connection per query: the TEMP view is visible to nobody else, and an interrupt on
      // timeout cannot hit anyone else's statement.
      await conn.run(viewSql);
      return await runLimitedTable(conn, sql, this.limits);
    } finally {
      conn.closeSync();
    }
  }
}
