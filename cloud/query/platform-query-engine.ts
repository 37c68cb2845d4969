// The QueryEngine behind DataService's TabularDataBySQL, TabularDataByMQL, GetDatabaseConnection and
// ConfigureDatabaseUser (cloud/data/query-engine-slot.ts). The data service has already checked the caller's
// key; everything here is scoped to the organisation it is given.
import type { QueryEngine, TabularDataSourceTypeName } from '../kit/query-engine-slot.js';
import { exactNumbers } from './exact-numbers.js';
import type { MqlRunner } from './mql/mql-runner.js';
import { databaseUsername, type DatabaseUsers } from './pg/database-users.js';
import { DATABASE_NAME } from './pg/pg-endpoint.js';
import { checkOrganizationId } from './sql/readings-view.js';
import type { SqlSandbox } from './sql/sql-sandbox.js';

export interface PlatformQueryEngineDeps {
  sandbox: SqlSandbox;
  mql: MqlRunner;
  users: DatabaseUsers;
  /** Where clients reach the PostgreSQL endpoint. */
  endpoint: () => { hostname: string; port: number };
}

export class PlatformQueryEngine implements QueryEngine {
  constructor(private readonly deps: PlatformQueryEngineDeps) {}

  async tabularDataBySQL(organizationId: string, sql: string): Promise<Record<string, unknown>[]> {
    // The documents become BSON here; the PostgreSQL endpoint renders the same bigints as exact text itself.
    return exactNumbers(await this.deps.sandbox.query(organizationId, sql));
  }

  tabularDataByMQL(
    organizationId: string,
    stages: Record<string, unknown>[],
    opts: { sourceType: TabularDataSourceTypeName; pipelineId?: string },
  ): Promise<Record<string, unknown>[]> {
    return this.deps.mql.run(checkOrganizationId(organizationId), stages, opts);
  }

  async getDatabaseConnection(organizationId: string): Promise<{ hostname: string; uri: string; hasDatabaseUser: boolean }> {
    checkOrganizationId(organizationId);
    const { hostname, port } = this.deps.endpoint();
    const host = hostname.includes(':') ? `[${hostname}]` : hostname;
    const user = encodeURIComponent(databaseUsername(organizationId));
    return {
      hostname,
      uri: `postgresql://${user}@${host}:${port}/${DATABASE_NAME}`,
      hasDatabaseUser: await this.deps.users.has(organizationId),
    };
  }

  configureDatabaseUser(organizationId: string, password: string): Promise<void> {
    return this.deps.users.configure(organizationId, password);
  }
}
