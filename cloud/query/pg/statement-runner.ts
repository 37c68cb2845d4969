// The DuckDB side of a PostgreSQL session: classifying, checking and preparing a statement (a data query
// through the sandbox's own inspection, a catalog query against the session's private catalog), starting a
// portal's result (streamed, or materialized when the statement's last result was small) and streaming its
// rows into DataRow batches. Every piece of DuckDB work runs under the organisation's admission turn, the
// statement timeout, the memory guard and CancelRequest (guarded). pg-session.ts speaks the protocol on top.
import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBResult } from '@duckdb/node-api';
import { DuckDBTypeId } from '@duckdb/node-api';
import { status } from '@grpc/grpc-js';
import { StatusError } from '../../../core/serving/status-error.js';
import { inspectStatement } from '../sql/statement-inspector.js';
import { queryStatusError } from '../sql/limited-run.js';
import { interruptOn, overMemoryMessage, type StopReason } from '../interrupt.js';
import { checkTextSize } from '../sql/sql-sandbox.js';
import { READINGS_COLUMNS } from '../sql/readings-view.js';
import { openCatalog } from './catalog.js';
import { checkCatalogStatement } from './catalog-inspector.js';
import { postgresColumnNames } from './column-names.js';
import { chunkWriters } from './column-writers.js';
import { normalizeDialect, toCatalogSchemas } from './pg-dialect.js';
import { oidOf, Oid, typeSize } from './pg-types.js';
import { catalogTables, isCatalogQuery, parseTree, sinkSelect } from './query-kinds.js';
import { parseSessionStatement, SERVER_VERSION, SessionSettings } from './session-statements.js';
import {
  BATCH_BYTES,
  bindParameters,
  formatOf,
  materializedChunk,
  PgError,
  SMALL_RESULT_ROWS,
  type Portal,
  type SessionOptions,
  type SinkRelation,
  type Statement,
} from './session-model.js';
import { commandComplete, DataRowBatch, portalSuspended, type ColumnDescription } from './wire-messages.js';
import type { Span } from '@opentelemetry/api';
import { endSpanOf, failSpan, startWorkSpan } from './pg-tracing.js';

export abstract class StatementRunner {
  protected readonly settings: SessionSettings;
  protected tx: 'I' | 'T' | 'E' = 'I';
  /** Its `cancel` interrupts the DuckDB work running now (CancelRequest, close); see interruptOn. */
  protected running?: { cancel?: () => void };
  /** The span of the frontend message being answered (pg-tracing.ts), while tracing is on. */
  protected messageSpan?: Span;
  /** Gives back the admission turn of the DuckDB work running now. */
  protected releaseTurn?: () => void;
  protected dataConn?: DuckDBConnection;
  protected catalog?: { instance: DuckDBInstance; conn: DuckDBConnection };
  /** The portal currently streaming on each connection; a new statement there invalidates it. */
  private readonly streaming = new Map<DuckDBConnection, Portal>();
  private readonly sinkNames = new Set<string>();
  private readonly sinks: SinkRelation[] = [];

  constructor(protected readonly o: SessionOptions) {
    this.settings = new SessionSettings(o.startupParams);
  }

  /** Classifies, checks and prepares one statement (a `duckdb prepare` span when traced). */
  protected async prepare(sql: string, paramOids: number[]): Promise<Statement> {
    const span = startWorkSpan(this.messageSpan, 'duckdb prepare');
    try {
      return await this.prepareStatement(sql, paramOids);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      endSpanOf(span);
    }
  }

  private async prepareStatement(sql: string, paramOids: number[]): Promise<Statement> {
    if (sql.replace(/;/g, '').trim() === '') return { kind: 'empty', paramOids, names: [] };
    if (this.tx === 'E' && !/^\s*(ROLLBACK|ABORT|COMMIT|END)\b/i.test(sql)) {
      throw new PgError('25P02', 'current transaction is aborted, commands ignored until end of transaction block');
    }
    const session = parseSessionStatement(sql);
    if (session) return { kind: 'session', session, paramOids, names: [] };
    // The same text-size limit as TabularDataBySQL, checked before DuckDB parses anything: its parser
    // cannot be interrupted, so the limit is what bounds a huge text (cloud/query/LIMITS.md).
    checkTextSize(sql, this.o.sandbox.limits, 'query');
    const conn = await this.data();
    const normalized = normalizeDialect(sql, this.o.username);
    // Parsing and inspection run under the statement timeout too: a huge text must not run unbounded.
    const deadline = Date.now() + this.o.timeoutMs;
    this.invalidateStreaming(conn); // any statement on the connection ends the result streaming there
    const parsed = await this.guarded(conn, () => parseTree(conn, normalized), deadline);
    if (!parsed || !isCatalogQuery(parsed, this.sinkNames)) {
      // The sandbox's own inspection: the same rules and messages as TabularDataBySQL.
      const node = await this.guarded(conn, () => inspectStatement(conn, normalized, { allowParameters: true, relations: this.sinkNames }), deadline);
      const prepared = await this.prepareOn(conn, normalized, deadline);
      return this.described({ kind: 'data', prepared, conn, paramOids, names: [], node, sql: normalized });
    }
    const cat = await this.catalogConn();
    const catalogSql = toCatalogSchemas(normalized);
    const node = await this.guarded(cat, () => parseTree(cat, catalogSql), deadline);
    if (!node) throw new PgError('42601', 'syntax error');
    checkCatalogStatement(node);
    const prepared = await this.prepareOn(cat, catalogSql, deadline);
    return this.described({ kind: 'catalog', prepared, conn: cat, paramOids, names: [], node, sql: catalogSql });
  }

  private async prepareOn(conn: DuckDBConnection, sql: string, deadline: number): Promise<DuckDBPreparedStatement> {
    this.invalidateStreaming(conn);
    return this.guarded(conn, () => conn.prepare(sql), deadline);
  }

  private described(s: Statement): Statement {
    const p = s.prepared!;
    const duckNames: string[] = [];
    for (let i = 0; i < p.columnCount; i++) duckNames.push(p.columnName(i));
    s.names = postgresColumnNames(s.node, duckNames);
    const n = p.parameterCount;
    const oids = s.paramOids.slice(0, n);
    for (let i = oids.length; i < n; i++) oids.push(0);
    for (let i = 0; i < n; i++) {
      if (oids[i] === 0) {
        const t = p.parameterTypeId(i + 1);
        if (t !== DuckDBTypeId.INVALID && t !== DuckDBTypeId.ANY) oids[i] = oidOf(p.parameterType(i + 1));
      }
    }
    s.paramOids = oids;
    return s;
  }

  private async data(): Promise<DuckDBConnection> {
    if (!this.dataConn) {
      const conn = await this.o.sandbox.openSession(this.o.organizationId);
      try {
        for (const sink of (await this.o.sinks?.()) ?? []) {
          const lower = sink.name.toLowerCase();
          // readings and catalog names win; a second pipeline of the same name (case-insensitively) is skipped.
          if (lower === 'readings' || catalogTables.has(lower) || this.sinkNames.has(lower)) continue;
          await conn.run(`CREATE OR REPLACE TEMP VIEW "${sink.name.replace(/"/g, '""')}" AS ${sinkSelect(sink.pipelineId)}`);
          this.sinkNames.add(lower);
          this.sinks.push(sink);
        }
      } catch (err) {
        conn.closeSync();
        throw err;
      }
      this.dataConn = conn;
    }
    return this.dataConn;
  }

  private async catalogConn(): Promise<DuckDBConnection> {
    if (!this.catalog) {
      const conn = await this.data();
      const probe = await conn.prepare('SELECT * FROM readings');
      const columns = READINGS_COLUMNS.map((name, i) => ({ name, typeOid: oidOf(probe.columnType(i)) }));
      probe.destroySync();
      const sinkColumns = [
        { name: 'data_end', typeOid: Oid.timestamptz },
        { name: 'position', typeOid: Oid.int4 },
        { name: 'doc', typeOid: Oid.jsonb },
      ];
      const relations = [{ name: 'readings', columns }, ...this.sinks.map((s) => ({ name: s.name, columns: sinkColumns }))];
      this.catalog = await openCatalog(relations, {
        database: this.o.database,
        username: this.o.username,
        serverVersion: SERVER_VERSION,
        backendPid: this.o.backendPid,
        settings: () => this.settings.all(),
      });
    }
    return this.catalog.conn;
  }

  private invalidateStreaming(conn: DuckDBConnection): void {
    const other = this.streaming.get(conn);
    if (other && !other.done) {
      other.invalidated = true;
      // DuckDB closes a streamed result itself when the connection runs something else; a materialized one
      // would stay in memory as long as its portal, so it is let go here.
      other.result = other.chunk = other.writers = undefined;
    }
    this.streaming.delete(conn);
  }

  /** Binds and starts a data or catalog portal's result, streamed or materialized (Describe portal may do this before Execute). */
  protected async start(portal: Portal): Promise<void> {
    if (portal.result || portal.done || portal.invalidated) return;
    const statement = portal.statement;
    const conn = statement.conn!;
    this.invalidateStreaming(conn);
    // Scale-out: the session's DuckDB holds a copy of the unsealed readings; each run sees them as of now.
    if (statement.kind === 'data') await this.o.sandbox.refreshSession(conn);
    let result: DuckDBResult | undefined;
    // A statement whose last result was small runs materialized: DuckDB executes it in one task of its thread
    // pool and the chunks are then read here without more hops. Streamed, the same point query takes three
    // hops (start, the row, the end), and each costs two thread wake-ups (about 0.1 ms on this kind of virtual
    // machine). The materialized run is of the statement wrapped in LIMIT SMALL_RESULT_ROWS + 1, so it never
    // holds more than one vector's worth of rows, like a streamed chunk: a result that has grown is seen by
    // its extra row, let go, and the statement streams from the start. It is interrupted by the statement
    // timeout, CancelRequest and the memory guard like any other DuckDB work.
    // One time budget for the whole start, a bounded run that found the result large included.
    const deadline = Date.now() + this.o.timeoutMs;
    const lastNames = statement.resultNames;
    if (lastNames && statement.lastRows !== undefined && statement.lastRows <= SMALL_RESULT_ROWS && statement.bounded !== null) {
      const bounded = (statement.bounded ??= await this.prepareBounded(statement, deadline));
      if (bounded) {
        bindParameters(bounded, portal.params);
        const small = await this.guarded(conn, () => bounded.run(), deadline);
        statement.lastRows = small.rowCount;
        // The wrapper renames duplicate columns (x, x_1), so the names are the last streamed run's.
        if (small.rowCount <= SMALL_RESULT_ROWS && small.columnCount === lastNames.length) {
          result = small;
          portal.nextChunk = 0;
        }
      }
    }
    if (!result) {
      const prepared = statement.prepared!;
      bindParameters(prepared, portal.params);
      result = await this.guarded(conn, () => prepared.stream(), deadline);
      statement.resultNames = result.columnNames();
    }
    portal.result = result;
    const types = result.columnTypes();
    // PostgreSQL allows duplicate column names (`SELECT n.oid, n.*`); DuckDB's deduplicated ones would rename them.
    const names = postgresColumnNames(statement.node, statement.resultNames!);
    portal.columns = { names, types, oids: types.map(oidOf) };
    this.streaming.set(conn, portal);
  }

  /** Prepares the statement wrapped in a LIMIT for its materialized runs, or null when DuckDB refuses the wrapper. */
  private async prepareBounded(statement: Statement, deadline: number): Promise<DuckDBPreparedStatement | null> {
    // The newline ends a trailing `--` comment; a trailing semicolon would end the inner statement.
    const inner = statement.sql!.replace(/[\s;]+$/, '');
    try {
      return await this.guarded(statement.conn!, () => statement.conn!.prepare(`SELECT * FROM (\n${inner}\n) LIMIT ${SMALL_RESULT_ROWS + 1}`), deadline);
    } catch (err) {
      // DuckDB refusing the wrapper (an invalid argument) only means this statement streams; a timeout, a
      // cancel or no admission turn is the statement's own error.
      if (err instanceof StatusError && err.code === status.INVALID_ARGUMENT) return null;
      throw err;
    }
  }

  protected describeColumns(portal: Portal): ColumnDescription[] {
    const c = portal.columns!;
    return c.names.map((name, i) => ({ name, typeOid: c.oids[i], typeSize: typeSize(c.oids[i]), format: formatOf(portal.formats, i) }));
  }

  /**
   * Runs one piece of DuckDB work (a parse, a prepare, the start of a result, one chunk) once the query
   * admission (cloud/query/admission.ts, shared with TabularDataBySQL) gives this organisation a turn, then
   * under the statement timeout, the memory guard and CancelRequest, which all interrupt DuckDB itself.
   * The turn is held only while DuckDB works, never while rows wait for the client, so a client that stops
   * reading cannot hold a slot. A wait longer than the admission allows is `53000` naming the limit.
   */
  private async guarded<T>(conn: DuckDBConnection, body: () => Promise<T>, deadline = Date.now() + this.o.timeoutMs): Promise<T> {
    const release = await this.o.sandbox.admit(this.o.organizationId);
    this.releaseTurn = release;
    const canceller: { cancel?: () => void } = {};
    this.running = canceller;
    const memory = this.o.sandbox.limits.memory;
    const stopped = (reason: StopReason) => {
      if (reason === 'cancel') return new PgError('57014', 'canceling statement due to user request');
      if (reason === 'memory') return new PgError('53200', `out of memory: ${overMemoryMessage(memory!, 'statement')}`);
      return new PgError('57014', `canceling statement due to statement timeout (the ${this.o.timeoutMs} ms time limit, PLATFORM_QUERY_TIMEOUT_MS)`);
    };
    try {
      return await interruptOn(conn, { deadline, memory, canceller }, body, stopped);
    } catch (err) {
      throw err instanceof PgError ? err : queryStatusError(err);
    } finally {
      this.running = undefined;
      this.releaseTurn = undefined;
      release();
    }
  }

  protected async *stream(portal: Portal, maxRows: number, tag = 'SELECT'): AsyncGenerator<Uint8Array> {
    const conn = portal.statement.conn!;
    const cols = portal.columns!;
    const formats = cols.types.map((_t, i) => formatOf(portal.formats, i));
    const batch = new DataRowBatch();
    let sentNow = 0;
    const width = cols.types.length;
    // One time budget per Execute (or FETCH), as statement_timeout covers a statement: the time between
    // Executes of a suspended portal, while DuckDB does nothing, does not count.
    const deadline = Date.now() + this.o.timeoutMs;
    while (!portal.done && (maxRows <= 0 || sentNow < maxRows)) {
      if (portal.rowInChunk >= portal.chunkRows) {
        const chunk = portal.nextChunk === undefined ? await this.guarded(conn, () => portal.result!.fetchChunk(), deadline) : materializedChunk(portal);
        if (!chunk || chunk.rowCount === 0) {
          portal.done = true;
          if (portal.nextChunk === undefined) portal.statement.lastRows = portal.sent + sentNow;
          break;
        }
        // The chunk stays referenced by the portal while its rows are written (a suspended portal included).
        portal.chunk = chunk;
        portal.writers = chunkWriters(chunk, cols.types, cols.oids, formats);
        portal.rowInChunk = 0;
        portal.chunkRows = chunk.rowCount;
      }
      const writers = portal.writers!;
      const end = maxRows > 0 ? Math.min(portal.chunkRows, portal.rowInChunk + (maxRows - sentNow)) : portal.chunkRows;
      for (let r = portal.rowInChunk; r < end; r++) {
        batch.beginRow(width);
        for (let c = 0; c < width; c++) writers[c](batch, r);
        batch.endRow();
        if (batch.size >= BATCH_BYTES) yield batch.take();
      }
      sentNow += end - portal.rowInChunk;
      portal.rowInChunk = end;
    }
    portal.sent += sentNow;
    if (batch.size > 0) yield batch.take();
    if (portal.done) {
      this.streaming.delete(conn);
      yield commandComplete(tag === 'SELECT' ? `SELECT ${portal.sent}` : `${tag} ${sentNow}`);
    } else yield tag === 'SELECT' ? portalSuspended() : commandComplete(`${tag} ${sentNow}`);
  }
}
