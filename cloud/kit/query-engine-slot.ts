// The SQL/MQL side of DataService. DataService's TabularDataBySQL, TabularDataByMQL,
// GetDatabaseConnection and ConfigureDatabaseUser check auth (organization-level key; owner for
// ConfigureDatabaseUser) and then delegate here. cloud/query implements it and registers it through
// its CloudExtension with ctx.setQueryEngine(engine). Until then those four RPCs answer UNAVAILABLE.
//
// Implementations throw StatusError (core/serving/status-error.ts) for bad input, e.g. invalidArgument
// for a non-SELECT statement; the handler passes the code through.
export type TabularDataSourceTypeName = 'STANDARD' | 'HOT_STORAGE' | 'PIPELINE_SINK';

export interface QueryEngine {
  /** Runs a read-only SQL query over the organization's `readings`; returns documents (BSON-encodable). */
  tabularDataBySQL(organizationId: string, sql: string): Promise<Record<string, unknown>[]>;
  /** Runs aggregation stages over the organization's readings (or a pipeline sink's output). */
  tabularDataByMQL(
    organizationId: string,
    stages: Record<string, unknown>[],
    opts: { sourceType: TabularDataSourceTypeName; pipelineId?: string },
  ): Promise<Record<string, unknown>[]>;
  getDatabaseConnection(organizationId: string): Promise<{ hostname: string; uri: string; hasDatabaseUser: boolean }>;
  configureDatabaseUser(organizationId: string, password: string): Promise<void>;
}

/** The slot that cloud/query fills; until then the four SQL/MQL RPCs answer UNAVAILABLE. It lives here,
 * beside the interface, so that the data service and the server assembling it share it without a cycle. */
export class QueryEngineSlot {
  engine?: QueryEngine;
}
