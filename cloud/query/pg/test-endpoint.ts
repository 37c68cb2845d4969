// A real PgEndpoint on a free port over a temporary store holding two organisations' readings, for the
// tests that drive it with real PostgreSQL clients (psql, psycopg2, JDBC, node-postgres).
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { SqlSandbox } from '../sql/sql-sandbox.js';
import type { QueryLimits } from '../sql/limits.js';
import type { QueryAdmission } from '../admission.js';
import { DatabaseUsers, databaseUsername } from './database-users.js';
import { PgEndpoint, type PgEndpointOptions } from './pg-endpoint.js';

export const PASSWORD_A = 'correct horse battery';
export const PASSWORD_B = 'another password';
export const USER_A = databaseUsername('org-a');
export const USER_B = databaseUsername('org-b');
/** A component name that only org-b has: no client of org-a may ever see it. */
export const SECRET_OF_B = 'org-b-secret-sensor';

export interface TestEndpoint {
  fx: TabularFixture;
  users: DatabaseUsers;
  endpoint: PgEndpoint;
  port: number;
  close(): Promise<void>;
}

export async function startTestEndpoint(
  options: Partial<Omit<PgEndpointOptions, 'users' | 'sandbox'>> = {},
  limits: Partial<QueryLimits> = {},
  admission?: QueryAdmission,
): Promise<TestEndpoint> {
  const fx = await createTabularFixture();
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  await fx.insert([
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0), tags: ['hot', 'x y'], data: { readings: { temperature: 21.5 } } },
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0 + 1000), data: { readings: { temperature: 22.5 } } },
    { organization_id: 'org-a', component_name: 'hygro', time_received: new Date(t0 + 2000), data: { readings: { humidity: 40 } } },
    { organization_id: 'org-b', component_name: SECRET_OF_B, time_received: new Date(t0), data: { readings: { temperature: 99 } } },
  ]);
  const users = new DatabaseUsers(fx.store);
  await users.init();
  await users.configure('org-a', PASSWORD_A);
  await users.configure('org-b', PASSWORD_B);
  const endpoint = new PgEndpoint({ users, sandbox: new SqlSandbox(fx.connect, limits, admission), host: '127.0.0.1', port: 0, ...options });
  const port = (await endpoint.listen()).port;
  return {
    fx,
    users,
    endpoint,
    port,
    async close() {
      await endpoint.close();
      await fx.close();
    },
  };
}
