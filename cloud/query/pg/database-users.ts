// The organisation's database user for the PostgreSQL endpoint. Only SCRAM-SHA-256 verifiers (salt,
// iteration count, StoredKey, ServerKey) are stored: enough to check a login, useless to log in with.
import { createScramSha256Data, type ScramSha256Data } from 'pg-gateway';
import { invalidArgument } from '../../../core/serving/status-error.js';
import { checkOrganizationId } from '../sql/readings-view.js';
import type { TabularStore } from '../../store/tabular.js';

export const DATABASE_USERS_DDL = `CREATE TABLE IF NOT EXISTS query_database_users (
  organization_id VARCHAR NOT NULL, username VARCHAR NOT NULL, scram_salt VARCHAR NOT NULL,
  scram_iterations INTEGER NOT NULL, scram_stored_key VARCHAR NOT NULL, scram_server_key VARCHAR NOT NULL,
  time_modified TIMESTAMPTZ NOT NULL)`;

/** The same work factor PostgreSQL uses by default (scram_iterations = 4096). */
const ITERATIONS = 4096;

export const databaseUsername = (organizationId: string) => `db-user-${organizationId}`;

export type UserStore = Pick<TabularStore, 'dialect' | 'query' | 'execute' | 'transact'>;

export class DatabaseUsers {
  constructor(private readonly store: UserStore) {}

  /** On DuckDB makes the table; on PostgreSQL the schema's migrations did (cloud/store/pg-schema.ts). */
  async init(): Promise<void> {
    if (this.store.dialect === 'duckdb') await this.store.execute(DATABASE_USERS_DDL);
  }

  /** Creates the organisation's user, or resets its password. */
  async configure(organizationId: string, password: string): Promise<void> {
    checkOrganizationId(organizationId);
    if (typeof password !== 'string' || password.length < 8) throw invalidArgument('password: must be at least 8 characters');
    if (password.length > 256) throw invalidArgument('password: must be at most 256 characters');
    if (/[\u0000-\u001f]/.test(password)) throw invalidArgument('password: must not contain control characters');
    const scram = await createScramSha256Data(password, ITERATIONS);
    await this.store.transact(async (tx) => {
      await tx.execute('DELETE FROM query_database_users WHERE organization_id = $1', [organizationId]);
      await tx.execute(`INSERT INTO query_database_users VALUES ($1, $2, $3, $4, $5, $6, now())`, [
        organizationId,
        databaseUsername(organizationId),
        scram.salt,
        scram.iterations,
        scram.storedKey,
        scram.serverKey,
      ]);
    });
  }

  async has(organizationId: string): Promise<boolean> {
    const rows = await this.store.query('SELECT 1 FROM query_database_users WHERE organization_id = $1', [organizationId]);
    return rows.length > 0;
  }

  /** The verifier and organisation of a username, or null if no such user exists. */
  async lookup(username: string): Promise<{ organizationId: string; scram: ScramSha256Data } | null> {
    const rows = await this.store.query('SELECT * FROM query_database_users WHERE username = $1', [username]);
    if (rows.length === 0) return null;
    const r = rows[0];
    return {
      organizationId: String(r.organization_id),
      scram: {
        salt: String(r.scram_salt),
        iterations: Number(r.scram_iterations),
        storedKey: String(r.scram_stored_key),
        serverKey: String(r.scram_server_key),
      },
    };
  }
}
