// The quiet organization's own PostgreSQL measurements while an attack runs: a fresh node-postgres
// connection (start-up, SCRAM, first ReadyForQuery) and a `SELECT 1` on it, one after the other, timed
// separately, with every failure counted by its SQLSTATE. Used by the attacks on the PostgreSQL endpoint
// and on the memory guard, where the harness's gRPC calls alone would not show the harm.
import pg from 'pg';
import { pct, type Tenant } from './harness.js';

export const PG_PASSWORD = 'bench isolation password';

/** Gives the tenant its database user (owner key), so that it can log in to the endpoint. */
export async function withDatabaseUser(tenant: Tenant): Promise<void> {
  await tenant.client.dataClient.configureDatabaseUser(tenant.orgId, PG_PASSWORD);
}

export function pgClient(tenant: Tenant, pgPort: number): pg.Client {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: pgPort,
    user: `db-user-${tenant.orgId}`,
    password: PG_PASSWORD,
    database: 'sensorData',
    connectionTimeoutMillis: 30_000,
  });
  client.on('error', () => undefined);
  return client;
}

export interface PgProbe {
  /** Stops probing and returns one line: connect and SELECT 1 p50/p99 and the failures by SQLSTATE. */
  stop(): Promise<string>;
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Connects, runs `sql`, disconnects, again and again until stopped. */
export function probePg(tenant: Tenant, pgPort: number, sql = 'SELECT 1'): PgProbe {
  const connect: number[] = [];
  const query: number[] = [];
  const failures = new Map<string, number>();
  let stopped = false;
  const fail = (err: unknown) => {
    const code = String((err as { code?: string }).code ?? (err as Error).message);
    failures.set(code, (failures.get(code) ?? 0) + 1);
  };
  const loop = (async () => {
    while (!stopped) {
      const client = pgClient(tenant, pgPort);
      try {
        let t = process.hrtime.bigint();
        await client.connect();
        connect.push(ms(t));
        t = process.hrtime.bigint();
        await client.query(sql);
        query.push(ms(t));
      } catch (err) {
        fail(err);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  })();
  const line = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)} ms p99 ${pct(xs, 0.99).toFixed(1)} ms (${xs.length})`;
  return {
    async stop() {
      stopped = true;
      await loop;
      return `quiet org over pg: connect ${line(connect)}, ${sql} ${line(query)}, failures ${JSON.stringify(Object.fromEntries(failures))}`;
    },
  };
}
