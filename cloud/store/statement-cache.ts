// Prepared statements of one DuckDB connection, kept by SQL text. Running a query through
// DuckDBConnection.run parses, plans and destroys a statement every time (three trips to the thread
// pool before the first row); the data API asks the same few shapes of query over and over, so
// keeping them prepared saves that work on every page. DuckDB re-binds a prepared statement by itself
// when the catalog changes under it, so a kept statement never answers for a stale schema.
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

export class StatementCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  private readonly statements = new Map<string, DuckDBPreparedStatement>();

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly capacity = 64,
  ) {}

  /** The prepared statement for sql, preparing it on first use. Throws what prepare throws. */
  async get(sql: string): Promise<DuckDBPreparedStatement> {
    const kept = this.statements.get(sql);
    if (kept) {
      this.statements.delete(sql);
      this.statements.set(sql, kept);
      return kept;
    }
    const statement = await this.conn.prepare(sql);
    this.statements.set(sql, statement);
    if (this.statements.size > this.capacity) {
      const [oldest, dropped] = this.statements.entries().next().value as [string, DuckDBPreparedStatement];
      this.statements.delete(oldest);
      dropped.destroySync();
    }
    return statement;
  }

  clear(): void {
    for (const statement of this.statements.values()) statement.destroySync();
    this.statements.clear();
  }
}
