// The PostgreSQL wire endpoint behind GetDatabaseConnection: an organisation's database user logs in with
// SCRAM-SHA-256 to database `sensorData` and runs SELECTs over its own `readings`, through exactly the
// same sandbox as TabularDataBySQL. Only the simple query protocol is served (psql, most BI tools' "simple" mode).
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { status } from '@grpc/grpc-js';
import { BackendError, createScramSha256Data, type ScramSha256Data } from 'pg-gateway';
import { fromNodeSocket } from 'pg-gateway/node';
import type { Logger } from 'pino';
import { StatusError } from '../../../core/shared/status-error.js';
import type { SqlSandbox } from '../sql/sql-sandbox.js';
import type { DatabaseUsers } from './database-users.js';
import { commandComplete, dataRow, emptyQueryResponse, errorResponse, PgType, readyForQuery, rowDescription } from './wire-messages.js';

export const DATABASE_NAME = 'sensorData';

const Q = 'Q'.charCodeAt(0);
const SYNC = 'S'.charCodeAt(0);
const TERMINATE = 'X'.charCodeAt(0);

export interface PgEndpointOptions {
  users: DatabaseUsers;
  sandbox: SqlSandbox;
  host: string;
  port: number;
  logger?: Logger;
}

export class PgEndpoint {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private decoy?: ScramSha256Data;

  constructor(private readonly options: PgEndpointOptions) {}

  /** Listens; a busy port falls back to one the OS picks, so the cloud still starts (the URI tells the port). */
  async listen(): Promise<AddressInfo> {
    this.decoy = await createScramSha256Data(randomBytes(24).toString('hex'));
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    const tryListen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    try {
      await tryListen(this.options.port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || this.options.port === 0) throw err;
      this.options.logger?.warn({ port: this.options.port }, 'PostgreSQL port in use; listening on a free port instead');
      await tryListen(0);
    }
    return server.address() as AddressInfo;
  }

  address(): AddressInfo | undefined {
    return this.server?.address() as AddressInfo | undefined;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let organizationId: string | undefined;
    let failedExtended = false;
    const { users, sandbox } = this.options;
    fromNodeSocket(socket, {
      serverVersion: '16.0 (platform sensorData)',
      auth: {
        method: 'scram-sha-256',
        // An unknown user gets a decoy verifier, so it fails exactly like a wrong password.
        getScramSha256Data: async ({ username }) => {
          const user = await users.lookup(username).catch(() => null);
          organizationId = user?.organizationId;
          return user?.scram ?? this.decoy!;
        },
      },
      onStartup: (state) => {
        const database = state.clientParams?.database ?? state.clientParams?.user;
        if (database !== DATABASE_NAME) {
          throw BackendError.create({ severity: 'FATAL', code: '3D000', message: `database "${database}" does not exist; connect to "${DATABASE_NAME}"` });
        }
      },
      onMessage: async (data, state) => {
        if (!state.isAuthenticated || state.step !== 'ReadyForQuery') return undefined;
        const code = data[0];
        if (code === TERMINATE) return undefined;
        if (code === SYNC) {
          failedExtended = false;
          return readyForQuery();
        }
        if (code !== Q) {
          // Extended protocol: one error, then skip everything until Sync, as a PostgreSQL server does.
          if (failedExtended) return new Uint8Array(0);
          failedExtended = true;
          return errorResponse('0A000', 'only the simple query protocol is supported');
        }
        const sql = Buffer.from(data.subarray(5)).toString('utf8').replace(/\0$/, '');
        return [...(await this.answer(organizationId!, sql, sandbox)), readyForQuery()];
      },
    }).catch((err) => {
      this.options.logger?.warn({ err }, 'PostgreSQL connection failed');
      socket.destroy();
    });
  }

  private async answer(organizationId: string, sql: string, sandbox: SqlSandbox): Promise<Uint8Array[]> {
    if (sql.replace(/;/g, '').trim() === '') return [emptyQueryResponse()];
    try {
      const { columns, docs } = await sandbox.queryTable(organizationId, sql);
      const described = columns.map((name) => ({ name, typeOid: typeOidOf(docs.map((d) => d[name])) }));
      return [
        rowDescription(described),
        ...docs.map((d) => dataRow(columns.map((c) => toText(d[c])))),
        commandComplete(`SELECT ${docs.length}`),
      ];
    } catch (err) {
      return [errorResponse(sqlState(err), String((err as Error).message).replace(/^sql_query: /, ''))];
    }
  }
}

function sqlState(err: unknown): string {
  if (!(err instanceof StatusError)) return 'XX000';
  if (err.code === status.PERMISSION_DENIED) return '42501';
  if (/timeout/.test(err.message)) return '57014';
  if (/limit/.test(err.message)) return '54000';
  return '42601';
}

function typeOidOf(values: unknown[]): number {
  const v = values.find((x) => x !== null && x !== undefined);
  if (typeof v === 'boolean') return PgType.bool;
  if (typeof v === 'bigint') return PgType.int8;
  if (typeof v === 'number') return values.every((x) => x == null || Number.isInteger(x)) ? PgType.int8 : PgType.float8;
  if (v instanceof Date) return PgType.timestamptz;
  if (v !== undefined && typeof v === 'object' && !(v instanceof Uint8Array)) return PgType.json;
  return PgType.text;
}

function toText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString().replace('T', ' ').replace('Z', '+00');
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (v instanceof Uint8Array) return `\\x${Buffer.from(v).toString('hex')}`;
  if (typeof v === 'object') return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}
