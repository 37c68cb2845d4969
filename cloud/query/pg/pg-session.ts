// One authenticated PostgreSQL connection: the simple and extended query protocols over the organisation's
// sandboxed `readings` (data queries) and its private catalog (catalog queries), plus session statements.
// Data queries run on one DuckDB connection per session that holds the organisation's TEMP view, through
// the same statement inspection as TabularDataBySQL; results stream chunk by chunk, so Execute's row limit
// suspends a portal without materialising the rest (a statement whose last result was small is the one
// exception, see StatementRunner.start). This file is the protocol: message dispatch, Parse/Bind/Describe/
// Execute/Close, simple queries and the output buffer; statement-runner.ts does the DuckDB work and
// session-commands.ts the session statements.
import { DuckDBTypeId } from '@duckdb/node-api';
import { oidOf, Oid, typeSize } from './pg-types.js';
import { decodeParameter, type BoundParameter } from './parameter-decoding.js';
import { SERVER_VERSION } from './session-statements.js';
import { SessionCommands } from './session-commands.js';
import { endSpanOf, failSpan, operationOf, startMessageSpan, startWorkSpan } from './pg-tracing.js';
import { destroyStatement, errorOf, OUTPUT_BYTES, PgError, type Portal, type Statement } from './session-model.js';
import {
  bindComplete,
  closeComplete,
  emptyQueryResponse,
  errorResponse,
  MessageReader,
  noData,
  parameterDescription,
  parameterStatus,
  parseComplete,
  readyForQuery,
  rowDescription,
  type ColumnDescription,
} from './wire-messages.js';

export { PgError, type SessionOptions, type SinkRelation } from './session-model.js';

const COPY_MESSAGES: Record<string, string> = { d: 'CopyData', c: 'CopyDone', f: 'CopyFail' };
/** The frontend message types of protocol 3.0 after start-up (Terminate is the endpoint's). */
const KNOWN_MESSAGES = new Set(['S', 'H', 'Q', 'P', 'B', 'D', 'E', 'C', 'F', 'X', ...Object.keys(COPY_MESSAGES)]);
/**
 * Messages after which held-back replies are written at once: Sync, Flush, a simple query and a
 * FunctionCall end a cycle, and a client that sent a stray Copy message would otherwise wait for an error
 * that sits in the buffer. A FATAL error is written at once too.
 */
const FLUSHED_AFTER = new Set([...'SHQFdcf'].map((c) => c.charCodeAt(0)));

export class PgSession extends SessionCommands {
  private skipToSync = false;
  private closed = false;
  private fatal = false;
  /** Replies not yet handed to the socket (see handle). */
  private outbox: Uint8Array[] = [];
  private outboxBytes = 0;

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
    const span = (this.messageSpan = startMessageSpan(String.fromCharCode(msg[0]), this.o));
    try {
      yield* this.buffered(msg);
    } finally {
      if (this.messageSpan === span) this.messageSpan = undefined;
      endSpanOf(span);
    }
  }

  private async *buffered(msg: Buffer): AsyncGenerator<Uint8Array> {
    for await (const m of this.answer(msg)) {
      this.outbox.push(m);
      this.outboxBytes += m.length;
      if (this.outboxBytes >= OUTPUT_BYTES) yield this.takeOutbox();
    }
    if ((FLUSHED_AFTER.has(msg[0]) || this.fatal) && this.outboxBytes > 0) yield this.takeOutbox();
  }

  /** True once the session answered with a FATAL error: the endpoint then closes the connection. */
  get ended(): boolean {
    return this.fatal;
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
      let sql: string;
      try {
        sql = body.cstring();
      } catch (err) {
        yield errorOf(err);
        yield readyForQuery(this.tx);
        return;
      }
      yield* this.simpleQuery(sql);
      return;
    }
    if (!KNOWN_MESSAGES.has(type)) {
      // As PostgreSQL does: an unknown type means the client and server no longer agree on the protocol,
      // so nothing after it can be trusted; the connection ends with a FATAL error, never in silence.
      this.fatal = true;
      yield errorResponse('08P01', `invalid frontend message type ${msg[0]} ("${type}")`, 'FATAL');
      return;
    }
    if (this.skipToSync) return; // after an extended-protocol error everything up to Sync is skipped, as in PostgreSQL
    if (type === 'F') {
      // FunctionCall is a cycle of its own that ends with ReadyForQuery, like a simple query.
      if (this.tx === 'T') this.tx = 'E';
      yield errorResponse('0A000', 'function calls (the FunctionCall message) are not supported; call the function in a SELECT');
      yield readyForQuery(this.tx);
      return;
    }
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
          // CopyData, CopyDone, CopyFail: this endpoint never starts a COPY (the sandbox refuses COPY).
          throw new PgError('08P01', `${COPY_MESSAGES[type]} message received while no COPY is in progress (COPY is not supported)`);
      }
    } catch (err) {
      failSpan(this.messageSpan, err);
      // Extended protocol: one error, then everything up to Sync is skipped, as PostgreSQL does.
      this.skipToSync = true;
      if (this.tx === 'T') this.tx = 'E';
      yield errorOf(err);
    }
  }

  private async *simpleQuery(sql: string): AsyncGenerator<Uint8Array> {
    this.messageSpan?.setAttribute('db.operation.name', operationOf(sql) ?? '');
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
      failSpan(this.messageSpan, err);
      if (this.tx === 'T') this.tx = 'E';
      yield errorOf(err);
    }
    yield readyForQuery(this.tx);
  }

  private async *parse(body: MessageReader): AsyncGenerator<Uint8Array> {
    const name = body.cstring();
    const sql = body.cstring();
    const n = body.count16();
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
    const nFormats = body.count16();
    const paramFormats: number[] = [];
    for (let i = 0; i < nFormats; i++) paramFormats.push(body.int16());
    const nParams = body.count16();
    if (nFormats > 1 && nFormats !== nParams) throw new PgError('08P01', `bind message has ${nFormats} parameter formats but ${nParams} parameters`);
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
    const nResult = body.count16();
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
      // Describing a portal starts its result: that DuckDB work is the Describe's `duckdb execute` span.
      const span = portal.result ? undefined : startWorkSpan(this.messageSpan, 'duckdb execute');
      try {
        await this.start(portal);
      } catch (err) {
        failSpan(span, err);
        throw err;
      } finally {
        endSpanOf(span);
      }
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
    const span = startWorkSpan(this.messageSpan, 'duckdb execute');
    try {
      const fresh = !portal.result;
      await this.start(portal);
      if (simple && fresh) yield rowDescription(this.describeColumns(portal));
      const before = portal.sent;
      yield* this.stream(portal, maxRows);
      span?.setAttribute('db.response.returned_rows', portal.sent - before);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      endSpanOf(span);
    }
  }
}
