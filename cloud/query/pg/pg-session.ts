// One authenticated PostgreSQL connection: the simple and extended query protocols over the organisation's
// sandboxed `readings` (data queries) and its private catalog (catalog queries), plus session statements.
// Data queries run on one DuckDB connection per session that holds the organisation's TEMP view, through
// the same statement inspection as TabularDataBySQL; results stream chunk by chunk, so Execute's row limit
// suspends a portal without materialising the rest (a statement whose last result was small is the one
// exception, see start()).
import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBPreparedStatement, DuckDBResult, DuckDBType } from '@duckdb/node-api';
import { DuckDBMaterializedResult, DuckDBTypeId } from '@duckdb/node-api';
import { status } from '@grpc/grpc-js';
import { StatusError, invalidArgument } from '../../../core/shared/status-error.js';
import { inspectStatement, type Tree } from '../sql/statement-inspector.js';
import { toStatusError } from '../sql/limited-run.js';
import { interruptOn, overMemoryMessage, type StopReason } from '../interrupt.js';
import { checkTextSize, type SqlSandbox } from '../sql/sql-sandbox.js';
import { READINGS_COLUMNS, sqlString } from '../sql/readings-view.js';
import { CATALOG_FUNCTIONS, CATALOG_RELATIONS, openCatalog } from './catalog.js';
import { allowedFunctions } from '../sql/function-allowlist.js';
import { checkCatalogStatement } from './catalog-inspector.js';
import { postgresColumnNames } from './column-names.js';
import { chunkWriters, type ColumnWriter } from './column-writers.js';
import { normalizeDialect, toCatalogSchemas } from './pg-dialect.js';
import { decodeParameter, oidOf, Oid, typeSize, type BoundParameter } from './pg-types.js';
import { parseSessionStatement, SERVER_VERSION, SessionSettings, type SessionStatement } from './session-statements.js';
import {
  bindComplete,
  closeComplete,
  commandComplete,
  DataRowBatch,
  emptyQueryResponse,
  errorResponse,
  MessageReader,
  noData,
  noticeResponse,
  parameterDescription,
  parameterStatus,
  parseComplete,
  portalSuspended,
  readyForQuery,
  rowDescription,
  type ColumnDescription,
} from './wire-messages.js';

/** A pipeline's sink, shown as a relation named after the pipeline. */
export interface SinkRelation {
  name: string;
  pipelineId: string;
}

export interface SessionOptions {
  organizationId: string;
  /** The organisation's pipeline sinks, read once when the session first needs its connection. */
  sinks?: () => Promise<readonly SinkRelation[]>;
  username: string;
  database: string;
  sandbox: SqlSandbox;
  timeoutMs: number;
  backendPid: number;
  startupParams: Record<string, string>;
}

/** A protocol-level failure with its SQLSTATE. */
export class PgError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Statement {
  kind: 'empty' | 'session' | 'data' | 'catalog';
  session?: SessionStatement;
  prepared?: DuckDBPreparedStatement;
  conn?: DuckDBConnection;
  paramOids: number[];
  names: string[];
  node?: Tree;
  /** The SQL that `prepared` was prepared from (dialect-normalized). */
  sql?: string;
  /** How many rows the statement's last complete result had: a small one makes its next run materialized. */
  lastRows?: number;
  /** DuckDB's column names of the statement's last streamed result (a wrapped run's are the wrapper's). */
  resultNames?: string[];
  /**
   * The statement wrapped in `LIMIT SMALL_RESULT_ROWS + 1`, prepared at its first materialized run; null
   * when it cannot be wrapped (it then always streams).
   */
  bounded?: DuckDBPreparedStatement | null;
}

interface Portal {
  statement: Statement;
  params: BoundParameter[];
  formats: number[];
  result?: DuckDBResult;
  /** For a materialized result, the index of the next chunk to read (chunks are read without a hop). */
  nextChunk?: number;
  columns?: { names: string[]; types: DuckDBType[]; oids: number[] };
  chunk?: DuckDBDataChunk;
  writers?: ColumnWriter[];
  rowInChunk: number;
  chunkRows: number;
  done: boolean;
  sent: number;
  invalidated?: boolean;
}

const BATCH_BYTES = 256 * 1024;
/** A result of at most this many rows (one DuckDB vector) is small: the statement's next run is materialized. */
const SMALL_RESULT_ROWS = 2048;
/** Held-back replies are written once they reach this size, so a large result streams. */
const OUTPUT_BYTES = 64 * 1024;

export class PgSession {
  private dataConn?: DuckDBConnection;
  private catalog?: { instance: DuckDBInstance; conn: DuckDBConnection };
  private readonly statements = new Map<string, Statement>();
  private readonly portals = new Map<string, Portal>();
  private readonly cursors = new Map<string, Portal>();
  private readonly settings: SessionSettings;
  private tx: 'I' | 'T' | 'E' = 'I';
  private skipToSync = false;
  /** Its `cancel` interrupts the DuckDB work running now (CancelRequest, close); see interruptOn. */
  private running?: { cancel?: () => void };
  /** Gives back the admission turn of the DuckDB work running now. */
  private releaseTurn?: () => void;
  private closed = false;
  /** The portal currently streaming on each connection; a new statement there invalidates it. */
  private readonly streaming = new Map<DuckDBConnection, Portal>();
  private readonly sinkNames = new Set<string>();
  private readonly sinks: SinkRelation[] = [];
  /** Replies not yet handed to the socket (see handle). */
  private outbox: Uint8Array[] = [];
  private outboxBytes = 0;

  constructor(private readonly o: SessionOptions) {
    this.settings = new SessionSettings(o.startupParams);
  }

  /** The ParameterStatus messages sent after authentication. */
  startupStatus(): Buffer[] {
    const s = this.settings;
    return [
      parameterStatus('server_version', SERVER_VERSION),
      parameterStatus('server_encoding', 'UTF8'),
      parameterStatus('client_encoding', s.get('client_encoding')),
      parameterStatus('DateStyle', s.get('datestyle')),
      parameterStatus('IntervalStyle', 'postgres'),
      parameterStatus('integer_datetimes', 'on'),
      parameterStatus('standard_conforming_strings', 'on'),
      parameterStatus('TimeZone', 'UTC'),
      parameterStatus('application_name', s.get('application_name')),
      parameterStatus('is_superuser', 'off'),
      parameterStatus('session_authorization', this.o.username),
      parameterStatus('default_transaction_read_only', 'on'),
    ];
  }

  /** Interrupts the running statement (CancelRequest). */
  cancel(): void {
    this.running?.cancel?.();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.running?.cancel?.();
    this.releaseTurn?.(); // a turn is never left held by a connection that went away
    for (const s of this.statements.values()) destroyStatement(s);
    this.statements.clear();
    this.portals.clear();
    this.cursors.clear();
    this.dataConn?.closeSync();
    this.dataConn = undefined;
    if (this.catalog) {
      this.catalog.conn.closeSync();
      this.catalog.instance.closeSync();
      this.catalog = undefined;
    }
  }

  /**
   * Answers one frontend message (type byte, length, body). Replies are held back until Sync, Flush or the
   * end of a simple query, as PostgreSQL's own output buffer does, and leave as one write: a driver's
   * Bind/Describe/Execute/Sync then costs one socket write and one wake-up of the client instead of four.
   * A large result still streams: the buffer is handed out whenever it passes OUTPUT_BYTES.
   */
  async *handle(msg: Buffer): AsyncGenerator<Uint8Array> {
    for await (const m of this.answer(msg)) {
      this.outbox.push(m);
      this.outboxBytes += m.length;
      if (this.outboxBytes >= OUTPUT_BYTES) yield this.takeOutbox();
    }
    const type = msg[0];
    if ((type === 0x53 || type === 0x48 || type === 0x51) && this.outboxBytes > 0) yield this.takeOutbox(); // S, H, Q
  }

  private takeOutbox(): Uint8Array {
    const out = this.outbox.length === 1 ? this.outbox[0] : Buffer.concat(this.outbox, this.outboxBytes);
    this.outbox = [];
    this.outboxBytes = 0;
    return out;
  }

  private async *answer(msg: Buffer): AsyncGenerator<Uint8Array> {
    if (this.closed) return;
    const type = String.fromCharCode(msg[0]);
    const body = new MessageReader(msg.subarray(5));
    if (type === 'S') {
      this.skipToSync = false;
      yield readyForQuery(this.tx);
      return;
    }
    if (type === 'H') return; // Flush: everything is written as it is produced.
    if (type === 'Q') {
      yield* this.simpleQuery(body.cstring());
      return;
    }
    if (this.skipToSync) return;
    try {
      switch (type) {
        case 'P':
          yield* this.parse(body);
          break;
        case 'B':
          yield* this.bind(body);
          break;
        case 'D':
          yield* this.describe(body);
          break;
        case 'E':
          yield* this.execute(body.cstring(), body.int32());
          break;
        case 'C':
          yield* this.closeObject(body);
          break;
        default:
          throw new PgError('08P01', `message type "${type}" is not supported (no COPY or function calls)`);
      }
    } catch (err) {
      // Extended protocol: one error, then everything up to Sync is skipped, as PostgreSQL does.
      this.skipToSync = true;
      if (this.tx === 'T') this.tx = 'E';
      yield this.errorOf(err);
    }
  }

  private async *simpleQuery(sql: string): AsyncGenerator<Uint8Array> {
    try {
      const statement = await this.prepare(sql, []);
      try {
        if (statement.kind === 'empty') yield emptyQueryResponse();
        else {
          const portal: Portal = { statement, params: [], formats: [], rowInChunk: 0, chunkRows: 0, done: false, sent: 0 };
          yield* this.run(portal, 0, true);
        }
      } finally {
        destroyStatement(statement);
      }
    } catch (err) {
      if (this.tx === 'T') this.tx = 'E';
      yield this.errorOf(err);
    }
    yield readyForQuery(this.tx);
  }

  private async *parse(body: MessageReader): AsyncGenerator<Uint8Array> {
    const name = body.cstring();
    const sql = body.cstring();
    const n = body.int16();
    const oids: number[] = [];
    for (let i = 0; i < n; i++) oids.push(body.int32());
    if (name && this.statements.has(name)) throw new PgError('42P05', `prepared statement "${name}" already exists`);
    const statement = await this.prepare(sql, oids);
    const old = this.statements.get(name);
    if (old && !name) destroyStatement(old);
    this.statements.set(name, statement);
    yield parseComplete();
  }

  private async *bind(body: MessageReader): AsyncGenerator<Uint8Array> {
    const portalName = body.cstring();
    const statementName = body.cstring();
    const statement = this.statements.get(statementName);
    if (!statement) throw new PgError('26000', `prepared statement "${statementName}" does not exist`);
    const nFormats = body.int16();
    const paramFormats: number[] = [];
    for (let i = 0; i < nFormats; i++) paramFormats.push(body.int16());
    const nParams = body.int16();
    if (nParams !== statement.paramOids.length) {
      throw new PgError(
        '08P01',
        `bind message supplies ${nParams} parameters, but prepared statement "${statementName}" requires ${statement.paramOids.length}`,
      );
    }
    const params: BoundParameter[] = [];
    for (let i = 0; i < nParams; i++) {
      const len = body.int32();
      const raw = len < 0 ? null : Buffer.from(body.bytes(len));
      const binary = (nFormats === 1 ? paramFormats[0] : (paramFormats[i] ?? 0)) === 1;
      params.push(decodeParameter(raw, statement.paramOids[i], binary, i));
    }
    const nResult = body.int16();
    const formats: number[] = [];
    for (let i = 0; i < nResult; i++) formats.push(body.int16());
    if (portalName && this.portals.has(portalName)) throw new PgError('42P03', `portal "${portalName}" already exists`);
    this.portals.set(portalName, { statement, params, formats, rowInChunk: 0, chunkRows: 0, done: false, sent: 0 });
    yield bindComplete();
  }

  private async *describe(body: MessageReader): AsyncGenerator<Uint8Array> {
    const what = String.fromCharCode(body.byte());
    const name = body.cstring();
    if (what === 'S') {
      const statement = this.statements.get(name);
      if (!statement) throw new PgError('26000', `prepared statement "${name}" does not exist`);
      yield parameterDescription(statement.paramOids.map((o) => o || Oid.text));
      yield this.statementDescription(statement);
      return;
    }
    const portal = this.portals.get(name);
    if (!portal) throw new PgError('34000', `portal "${name}" does not exist`);
    if (portal.statement.kind === 'data' || portal.statement.kind === 'catalog') {
      await this.start(portal);
      yield rowDescription(this.describeColumns(portal));
    } else yield this.statementDescription(portal.statement);
  }

  private statementDescription(statement: Statement): Buffer {
    if (statement.kind === 'session' && statement.session?.kind === 'show')
      return rowDescription([{ name: statement.session.name, typeOid: Oid.text, typeSize: -1, format: 0 }]);
    if (!statement.prepared) return noData();
    const p = statement.prepared;
    const cols: ColumnDescription[] = [];
    for (let i = 0; i < p.columnCount; i++) {
      const t = p.columnType(i);
      const oid = (t.typeId as number) === DuckDBTypeId.INVALID ? Oid.text : oidOf(t);
      cols.push({ name: statement.names[i], typeOid: oid, typeSize: typeSize(oid), format: 0 });
    }
    return rowDescription(cols);
  }

  private async *execute(name: string, maxRows: number): AsyncGenerator<Uint8Array> {
    const portal = this.portals.get(name);
    if (!portal) throw new PgError('34000', `portal "${name}" does not exist`);
    yield* this.run(portal, maxRows, false);
    if (portal.done && !name) this.portals.delete(name);
  }

  private async *closeObject(body: MessageReader): AsyncGenerator<Uint8Array> {
    const what = String.fromCharCode(body.byte());
    const name = body.cstring();
    if (what === 'S') {
      destroyStatement(this.statements.get(name));
      this.statements.delete(name);
    } else this.portals.delete(name);
    yield closeComplete();
  }

  /** Classifies, checks and prepares one statement. */
  private async prepare(sql: string, paramOids: number[]): Promise<Statement> {
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
  private async start(portal: Portal): Promise<void> {
    if (portal.result || portal.done || portal.invalidated) return;
    const statement = portal.statement;
    const conn = statement.conn!;
    this.invalidateStreaming(conn);
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

  private describeColumns(portal: Portal): ColumnDescription[] {
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
      throw err instanceof PgError ? err : toStatusError(err);
    } finally {
      this.running = undefined;
      this.releaseTurn = undefined;
      release();
    }
  }

  /** Executes a portal: up to maxRows rows (0 = all), then CommandComplete or PortalSuspended. */
  private async *run(portal: Portal, maxRows: number, simple: boolean): AsyncGenerator<Uint8Array> {
    const st = portal.statement;
    if (st.kind === 'empty') {
      yield emptyQueryResponse();
      return;
    }
    if (st.kind === 'session') {
      yield* this.runSession(st.session!, simple);
      return;
    }
    if (portal.invalidated)
      throw new PgError('55000', 'portal was closed because a later statement ran on the same connection; fetch a portal to its end before starting another');
    const fresh = !portal.result;
    await this.start(portal);
    if (simple && fresh) yield rowDescription(this.describeColumns(portal));
    yield* this.stream(portal, maxRows);
  }

  private async *stream(portal: Portal, maxRows: number, tag = 'SELECT'): AsyncGenerator<Uint8Array> {
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

  private async *runSession(s: SessionStatement, simple: boolean): AsyncGenerator<Uint8Array> {
    switch (s.kind) {
      case 'set': {
        const reported = this.settings.set(s.name, s.value);
        if (reported) yield parameterStatus(reported, this.settings.get(s.name));
        yield commandComplete('SET');
        return;
      }
      case 'reset':
        this.settings.reset(s.name);
        yield commandComplete('RESET');
        return;
      case 'show': {
        if (s.name === 'all') {
          if (simple)
            yield rowDescription([
              { name: 'name', typeOid: Oid.text, typeSize: -1, format: 0 },
              { name: 'setting', typeOid: Oid.text, typeSize: -1, format: 0 },
            ]);
          const batch = new DataRowBatch();
          for (const [k, v] of this.settings.all()) {
            batch.beginRow(2);
            batch.text(k);
            batch.text(v);
            batch.endRow();
          }
          yield batch.take();
          yield commandComplete('SHOW');
          return;
        }
        const value = this.settings.get(s.name);
        if (simple) yield rowDescription([{ name: s.name, typeOid: Oid.text, typeSize: -1, format: 0 }]);
        const batch = new DataRowBatch();
        batch.beginRow(1);
        batch.text(value);
        batch.endRow();
        yield batch.take();
        yield commandComplete('SHOW');
        return;
      }
      case 'begin':
        if (this.tx !== 'I') yield noticeResponse('25001', 'there is already a transaction in progress');
        this.tx = 'T';
        yield commandComplete('BEGIN');
        return;
      case 'commit': {
        const failed = this.tx === 'E';
        this.endTransaction();
        yield commandComplete(failed ? 'ROLLBACK' : 'COMMIT');
        return;
      }
      case 'rollback':
        this.endTransaction();
        yield commandComplete('ROLLBACK');
        return;
      case 'declare': {
        if (this.cursors.has(s.cursor)) throw new PgError('42P03', `cursor "${s.cursor}" already exists`);
        const statement = await this.prepare(s.query, []);
        if (statement.kind !== 'data' && statement.kind !== 'catalog') throw invalidArgument('DECLARE: a cursor must be declared FOR a SELECT');
        this.cursors.set(s.cursor, { statement, params: [], formats: [], rowInChunk: 0, chunkRows: 0, done: false, sent: 0 });
        yield commandComplete('DECLARE CURSOR');
        return;
      }
      case 'fetch': {
        const portal = this.cursors.get(s.cursor);
        if (!portal) throw new PgError('34000', `cursor "${s.cursor}" does not exist`);
        if (portal.invalidated) throw new PgError('55000', `cursor "${s.cursor}" was closed because a later statement ran on the same connection`);
        await this.start(portal);
        if (s.tag === 'FETCH' && simple) yield rowDescription(this.describeColumns(portal));
        if (portal.done) {
          yield commandComplete(`${s.tag} 0`);
          return;
        }
        yield* this.stream(portal, s.count === 'all' ? 0 : Math.max(1, s.count), s.tag);
        return;
      }
      case 'close':
        if (s.cursor === 'all') this.cursors.clear();
        else if (!this.cursors.delete(s.cursor)) throw new PgError('34000', `cursor "${s.cursor}" does not exist`);
        yield commandComplete('CLOSE CURSOR');
        return;
      case 'deallocate':
        if (s.name === 'all') {
          for (const [k, v] of this.statements)
            if (k) {
              destroyStatement(v);
              this.statements.delete(k);
            }
        } else {
          destroyStatement(this.statements.get(s.name));
          this.statements.delete(s.name);
        }
        yield commandComplete('DEALLOCATE');
        return;
      case 'discard':
        this.settings.reset('all');
        this.cursors.clear();
        this.portals.clear();
        yield commandComplete('DISCARD ALL');
        return;
    }
  }

  private endTransaction(): void {
    this.tx = 'I';
    this.cursors.clear(); // cursors are WITHOUT HOLD: they end with their transaction
  }

  private errorOf(err: unknown): Buffer {
    if (err instanceof PgError) return errorResponse(err.code, err.message);
    const e = err instanceof StatusError ? err : toStatusError(err);
    return errorResponse(sqlState(e), e.message.replace(/^sql_query: /, ''));
  }
}

export function sqlState(err: StatusError): string {
  const m = err.message;
  if (err.code === status.PERMISSION_DENIED) return '42501';
  if (err.code === status.NOT_FOUND) return '42704';
  if (err.code === status.RESOURCE_EXHAUSTED) return '53000';
  if (err.code === status.DEADLINE_EXCEEDED || /timeout/.test(m)) return '57014';
  if (/syntax error|Parser Error/i.test(m)) return '42601';
  if (/Referenced column|column .* not found|Binder Error.*column/i.test(m)) return '42703';
  if (/Table with name|does not exist/i.test(m)) return '42P01';
  if (/Conversion Error|Could not convert|is not (a|an) /i.test(m)) return '22P02';
  if (/limit/.test(m)) return '54000';
  return '42000';
}

function formatOf(formats: number[], i: number): number {
  if (formats.length === 0) return 0;
  return formats.length === 1 ? formats[0] : (formats[i] ?? 0);
}

async function parseTree(conn: DuckDBConnection, sql: string): Promise<Tree | undefined> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const parsed = JSON.parse(String(reader.getRows()[0][0])) as Tree;
  if (parsed.error) return undefined;
  const statements = parsed.statements as Tree[];
  return statements.length === 1 ? (statements[0].node as Tree) : undefined;
}

const catalogTables = new Set(CATALOG_RELATIONS.pgc);

/**
 * A sink's documents, oldest window first: the window's end, the document's position in its run, and the
 * document as JSON (relaxed extended JSON, as the pipeline store keeps it).
 */
const sinkSelect = (pipelineId: string) =>
  `SELECT data_end, position, doc::JSON AS doc FROM main.query_data_pipeline_sink WHERE pipeline_id = ${sqlString(pipelineId)}`;
const catalogOnlyFunctions = new Set<string>(CATALOG_FUNCTIONS.filter((f) => !allowedFunctions.has(f)));

/**
 * A catalog query names a pg_catalog or information_schema relation, or a catalog function, and no other
 * table. Everything else is a data query, and the sandbox decides about it with its own rules and messages.
 */
function isCatalogQuery(tree: Tree, sinks: ReadonlySet<string>): boolean {
  let catalog = false;
  let other = false;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const obj = value as Tree;
    if (obj.type === 'BASE_TABLE' && 'table_name' in obj) {
      const schema = String(obj.schema_name ?? '').toLowerCase();
      const name = String(obj.table_name).toLowerCase();
      if (schema === 'pg_catalog' || schema === 'information_schema' || (schema === '' && catalogTables.has(name))) catalog = true;
      else if (schema !== '' || name === 'readings' || sinks.has(name)) other = true;
    }
    if (typeof obj.class === 'string' && 'function_name' in obj && catalogOnlyFunctions.has(String(obj.function_name).toLowerCase())) catalog = true;
    Object.values(obj).forEach(visit);
  };
  visit(tree);
  return catalog && !other;
}

/** The next chunk of a portal's materialized result, or null after the last. */
function materializedChunk(portal: Portal): DuckDBDataChunk | null {
  const result = portal.result as DuckDBMaterializedResult;
  return portal.nextChunk! < result.chunkCount ? result.getChunk(portal.nextChunk!++) : null;
}

function bindParameters(prepared: DuckDBPreparedStatement, params: readonly BoundParameter[]): void {
  prepared.clearBindings();
  params.forEach((p, i) => (p.value === null ? prepared.bindNull(i + 1) : prepared.bindValue(i + 1, p.value, p.type)));
}

function destroyStatement(statement: Statement | undefined): void {
  statement?.prepared?.destroySync();
  statement?.bounded?.destroySync();
}
