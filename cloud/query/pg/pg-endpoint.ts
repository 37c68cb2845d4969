// The PostgreSQL wire endpoint behind GetDatabaseConnection: an organisation's database user logs in with
// SCRAM-SHA-256 to database `sensorData` and runs queries over its own `readings` through the same sandbox
// as TabularDataBySQL, with the simple and extended query protocols and an organisation-scoped catalog
// (pg-session.ts). pg-gateway does the start-up, TLS and SCRAM exchange; this file adds the connection
// limits, login back-off, CancelRequest and the start-up ParameterStatus/BackendKeyData set.
import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { BackendError, closeSignal, createScramSha256Data, verifyScramSha256Password, type ScramSha256Data } from 'pg-gateway';
import { fromNodeSocket } from 'pg-gateway/node';
import type { Logger } from 'pino';
import type { SqlSandbox } from '../sql/sql-sandbox.js';
import { ConnectionSlots, isRefusal } from './connection-slots.js';
import type { DatabaseUsers } from './database-users.js';
import { PgSession, type SinkRelation } from './pg-session.js';
import { backendKeyData, errorResponse, readyForQuery } from './wire-messages.js';

export const DATABASE_NAME = 'sensorData';

/**
 * Login back-off, shaped like cloud/auth/login-backoff.ts's LoginGate: check throws (or rejects with)
 * RESOURCE_EXHAUSTED; each call is awaited (the scale-out mode's gate keeps its counts in PostgreSQL).
 */
export interface LoginGate {
  check(keyId: string, address: string): void | Promise<void>;
  failed(keyId: string, address: string): void | Promise<void>;
  succeeded(keyId: string, address: string): void | Promise<void>;
}

export interface PgLimits {
  /** A connection must finish start-up and authentication within this time. */
  handshakeTimeoutMs: number;
  /** A connection that sends nothing for this long is closed. */
  idleTimeoutMs: number;
  /** More open connections than this are refused with 53300. */
  maxConnections: number;
  /** More connections from one address that have not logged in yet are refused with 53300. */
  maxStartupsPerAddress: number;
  /** More logged-in sessions of one organisation are refused with 53300 (keep it under maxConnections). */
  maxSessionsPerOrganization: number;
  /** A frontend message larger than this closes the connection (54000). */
  maxMessageBytes: number;
}

export const DEFAULT_PG_LIMITS: PgLimits = {
  handshakeTimeoutMs: 10_000,
  idleTimeoutMs: 600_000,
  maxConnections: 200,
  maxStartupsPerAddress: 20,
  maxSessionsPerOrganization: 50,
  maxMessageBytes: 1024 * 1024,
};

/** The limits from the environment of `platform-cloud serve` (see README.md beside this file). */
export function pgLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): PgLimits {
  const num = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}: must be an integer >= ${min}, got "${raw}"`);
    return n;
  };
  return {
    handshakeTimeoutMs: num('PLATFORM_QUERY_PG_HANDSHAKE_TIMEOUT_MS', DEFAULT_PG_LIMITS.handshakeTimeoutMs, 100),
    idleTimeoutMs: num('PLATFORM_QUERY_PG_IDLE_TIMEOUT_MS', DEFAULT_PG_LIMITS.idleTimeoutMs, 100),
    maxConnections: num('PLATFORM_QUERY_PG_MAX_CONNECTIONS', DEFAULT_PG_LIMITS.maxConnections, 1),
    maxStartupsPerAddress: num('PLATFORM_QUERY_PG_MAX_STARTUPS_PER_ADDRESS', DEFAULT_PG_LIMITS.maxStartupsPerAddress, 1),
    maxSessionsPerOrganization: num('PLATFORM_QUERY_PG_MAX_SESSIONS_PER_ORG', DEFAULT_PG_LIMITS.maxSessionsPerOrganization, 1),
    maxMessageBytes: num('PLATFORM_QUERY_PG_MAX_MESSAGE_BYTES', DEFAULT_PG_LIMITS.maxMessageBytes, 1024),
  };
}

export interface PgEndpointOptions {
  users: DatabaseUsers;
  sandbox: SqlSandbox;
  host: string;
  port: number;
  logger?: Logger;
  /** When set, SSLRequest is answered with TLS, and connections without TLS are refused. */
  tls?: { cert: Buffer; key: Buffer };
  loginGate?: LoginGate;
  limits?: Partial<PgLimits>;
  /** The organisation's pipeline sinks, shown as relations beside readings (e.g. from PipelineStore.list). */
  sinks?: (organizationId: string) => Promise<readonly SinkRelation[]>;
}

const CANCEL_REQUEST_CODE = 80877102;

/** pg-gateway's connection internals that the start-up override below touches (version 0.3.0-beta.4). */
interface GatewayConnection {
  isAuthenticated: boolean;
  step: string;
  completeAuthentication: () => AsyncGenerator<Uint8Array>;
}

export class PgEndpoint {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Map<number, { secret: number; session: PgSession }>();
  private decoy?: ScramSha256Data;
  readonly limits: PgLimits;
  /** The connection counts: in total, per address before login, per organisation after (connection-slots.ts). */
  readonly slots: ConnectionSlots;

  constructor(private readonly options: PgEndpointOptions) {
    this.limits = { ...pgLimitsFromEnv(), ...options.limits };
    this.slots = new ConnectionSlots(this.limits);
  }

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

  /** Open client connections (for tests and monitoring). */
  get connectionCount(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    // Sessions hold DuckDB connections: release them now, before the caller closes the database.
    for (const { session } of this.sessions.values()) await session.close();
    this.sessions.clear();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    // Replies go out as several small writes (BindComplete, DataRow, CommandComplete, ReadyForQuery);
    // with Nagle on, the client's delayed ACK adds about 40 ms to every round trip.
    socket.setNoDelay(true);
    // Evicted (the endpoint is full and this one has not logged in after a second): closed without a word,
    // as the handshake timer closes it, since it may be in the middle of TLS.
    const slot = this.slots.accept(socket.remoteAddress ?? 'unknown', () => socket.destroy());
    if (isRefusal(slot)) {
      // Destroyed once the error is flushed: a socket nobody reads would never see the client's FIN.
      socket.end(errorResponse(slot.code, slot.message, 'FATAL'), () => socket.destroy());
      return;
    }
    this.sockets.add(socket);
    const address = slot.address;
    const { users, sandbox, loginGate } = this.options;
    const limits = this.limits;
    let organizationId: string | undefined;
    let username = '';
    let session: PgSession | undefined;
    let pid = 0;

    // Handshake and idle limits: a connection that stalls is dropped, so idle sockets cannot pile up.
    const handshakeTimer = setTimeout(() => socket.destroy(), limits.handshakeTimeoutMs);
    let idleTimer: NodeJS.Timeout | undefined;
    const touch = () => {
      if (!session) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => socket.destroy(), limits.idleTimeoutMs);
    };
    // pg-gateway buffers a whole message before handing it over, so bound what can pile up unread.
    let pendingBytes = 0;
    socket.on('data', (chunk: Buffer) => {
      pendingBytes += chunk.length;
      if (pendingBytes > limits.maxMessageBytes + 64 * 1024) {
        this.options.logger?.warn({ address, limit: limits.maxMessageBytes }, 'PostgreSQL message over the size limit; connection closed');
        socket.destroy();
      }
      touch();
    });
    socket.on('close', () => {
      clearTimeout(handshakeTimer);
      clearTimeout(idleTimer);
      slot.release();
      this.sockets.delete(socket);
      if (pid) this.sessions.delete(pid);
      void session?.close();
    });

    // eslint-disable-next-line @typescript-eslint/no-this-alias -- pg-gateway calls some hooks with its own `this`
    const endpoint = this;
    fromNodeSocket(socket, {
      tls: this.options.tls && { cert: toArrayBuffer(this.options.tls.cert), key: toArrayBuffer(this.options.tls.key) },
      auth: {
        method: 'scram-sha-256',
        // An unknown user gets a decoy verifier, so it fails exactly like a wrong password.
        getScramSha256Data: async ({ username: name }) => {
          const user = await users.lookup(name).catch(() => null);
          organizationId = user?.organizationId;
          return user?.scram ?? this.decoy!;
        },
        validateCredentials: async ({ authMessage, clientProof, scramSha256Data }) => {
          const ok = organizationId !== undefined && (await verifyScramSha256Password({ authMessage, clientProof, storedKey: scramSha256Data.storedKey }));
          if (ok) await loginGate?.succeeded(username, address);
          else await loginGate?.failed(username, address);
          return ok;
        },
      },
      onStartup: async (state) => {
        username = state.clientParams?.user ?? '';
        try {
          await loginGate?.check(username, address);
        } catch (err) {
          throw BackendError.create({ severity: 'FATAL', code: '53400', message: String((err as Error).message) });
        }
        const database = state.clientParams?.database ?? state.clientParams?.user;
        if (database !== DATABASE_NAME) {
          throw BackendError.create({ severity: 'FATAL', code: '3D000', message: `database "${database}" does not exist; connect to "${DATABASE_NAME}"` });
        }
      },
      onMessage: async (data, state) => {
        pendingBytes = 0;
        if (!state.hasStarted && data.length === 16 && Buffer.from(data).readInt32BE(4) === CANCEL_REQUEST_CODE) {
          const b = Buffer.from(data);
          this.cancel(b.readInt32BE(8), b.readInt32BE(12));
          return [closeSignal] as unknown as Uint8Array[];
        }
        if (data.length > limits.maxMessageBytes) {
          return [
            errorResponse('54000', `message of ${data.length} bytes is over the ${limits.maxMessageBytes}-byte limit`, 'FATAL'),
            closeSignal,
          ] as unknown as Uint8Array[];
        }
        if (!state.isAuthenticated || state.step !== 'ReadyForQuery' || !session) return undefined;
        if (data[0] === 0x58) return undefined; // Terminate: pg-gateway closes
        const live = session;
        return answered(live.handle(Buffer.from(data.buffer, data.byteOffset, data.byteLength)), () => live.ended);
      },
    })
      .then((connection) => {
        // pg-gateway sends only server_version after AuthenticationOk; drivers (psycopg2, JDBC) need the
        // full ParameterStatus set and BackendKeyData before the first ReadyForQuery, so that step is ours.
        const conn = connection as unknown as GatewayConnection;
        conn.completeAuthentication = async function* () {
          // The organisation's session limit, checked once the password has proven which organisation it is.
          const refused = slot.loggedIn(organizationId!, username);
          if (refused) {
            endpoint.options.logger?.warn(
              { organizationId, limit: endpoint.limits.maxSessionsPerOrganization },
              'PostgreSQL session refused: organisation at its limit',
            );
            throw BackendError.create({ severity: 'FATAL', code: refused.code, message: refused.message });
          }
          conn.isAuthenticated = true;
          clearTimeout(handshakeTimer);
          yield authenticationOk();
          pid = endpoint.newPid();
          const secret = randomInt(1, 2 ** 31 - 1);
          session = new PgSession({
            organizationId: organizationId!,
            username,
            sinks: endpoint.options.sinks && (() => endpoint.options.sinks!(organizationId!)),
            database: DATABASE_NAME,
            sandbox,
            timeoutMs: sandbox.limits.timeoutMs,
            backendPid: pid,
            startupParams: (connection as unknown as { clientParams?: Record<string, string> }).clientParams ?? {},
          });
          endpoint.sessions.set(pid, { secret, session });
          touch();
          for (const m of session.startupStatus()) yield m;
          yield backendKeyData(pid, secret);
          conn.step = 'ReadyForQuery';
          yield readyForQuery('I');
        };
      })
      .catch((err) => {
        this.options.logger?.warn({ err }, 'PostgreSQL connection failed');
        socket.destroy();
      });
  }

  private newPid(): number {
    for (;;) {
      const pid = randomInt(1000, 2 ** 31 - 1);
      if (!this.sessions.has(pid)) return pid;
    }
  }

  /** CancelRequest: interrupts the session's running statement when the key matches; silent otherwise, as PostgreSQL is. */
  private cancel(pid: number, secret: number): void {
    const entry = this.sessions.get(pid);
    if (entry && entry.secret === secret) entry.session.cancel();
  }
}

function authenticationOk(): Buffer {
  const b = Buffer.alloc(9);
  b.write('R', 0, 'ascii');
  b.writeInt32BE(8, 1);
  b.writeInt32BE(0, 5);
  return b;
}

const toArrayBuffer = (b: Buffer): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/**
 * pg-gateway treats a message whose handler produced nothing as unhandled and answers it itself with an
 * error; Flush, messages skipped until Sync after an error, and replies the session holds back until Sync
 * rightly produce nothing. A generator that returns a value (not bytes) counts as handled and writes
 * nothing, which spares the socket an empty write per message. After a FATAL answer it yields pg-gateway's
 * close signal, which ends the connection.
 */
async function* answered(messages: AsyncGenerator<Uint8Array>, ended: () => boolean): AsyncGenerator<Uint8Array, boolean> {
  let any = false;
  for await (const m of messages) {
    any = true;
    yield m;
  }
  // A FATAL answer (an unknown message type) ends the connection once it is written.
  if (ended()) yield closeSignal as unknown as Uint8Array;
  return !any;
}
