// Session statements, answered by the endpoint and never sent to DuckDB: SET/RESET/SHOW, transaction
// control around the read-only work, cursors (DECLARE/FETCH/MOVE/CLOSE, as psycopg2's named cursors use
// them), DEALLOCATE and DISCARD ALL. session-statements.ts parses them; this runs them on the session.
import { invalidArgument } from '../../../core/serving/status-error.js';
import { Oid } from './pg-types.js';
import type { SessionStatement } from './session-statements.js';
import { destroyStatement, PgError, type Portal, type Statement } from './session-model.js';
import { StatementRunner } from './statement-runner.js';
import { commandComplete, DataRowBatch, noticeResponse, parameterStatus, rowDescription } from './wire-messages.js';

export abstract class SessionCommands extends StatementRunner {
  protected readonly statements = new Map<string, Statement>();
  protected readonly portals = new Map<string, Portal>();
  protected readonly cursors = new Map<string, Portal>();

  protected async *runSession(s: SessionStatement, simple: boolean): AsyncGenerator<Uint8Array> {
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
}
