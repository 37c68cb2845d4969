// A DuckDB database holding a `tabular_data` table shaped as the cloud storage contract says, for tests and
// benchmarks of the query engine without a running cloud server.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

export const TABULAR_DATA_DDL = `CREATE TABLE IF NOT EXISTS tabular_data (
  id VARCHAR, organization_id VARCHAR, location_id VARCHAR, robot_id VARCHAR, robot_name VARCHAR,
  part_id VARCHAR, part_name VARCHAR, component_type VARCHAR, component_name VARCHAR, method_name VARCHAR,
  method_parameters JSON, tags VARCHAR[], time_requested TIMESTAMPTZ, time_received TIMESTAMPTZ,
  time_synced TIMESTAMPTZ, data JSON)`;

export interface Reading {
  id?: string;
  organization_id: string;
  location_id?: string;
  robot_id?: string;
  robot_name?: string;
  part_id?: string;
  part_name?: string;
  component_type?: string;
  component_name?: string;
  method_name?: string;
  tags?: string[];
  time_received: Date;
  data: unknown;
}

export interface TabularFixture {
  instance: DuckDBInstance;
  connect(): Promise<DuckDBConnection>;
  insert(rows: Reading[]): Promise<void>;
  close(): void;
}

export async function createTabularFixture(path = ':memory:'): Promise<TabularFixture> {
  const instance = await DuckDBInstance.create(path);
  const admin = await instance.connect();
  await admin.run(TABULAR_DATA_DDL);
  let seq = 0;
  return {
    instance,
    connect: () => instance.connect(),
    async insert(rows) {
      // One statement for the whole batch: the rows travel as one JSON array parameter.
      const batch = rows.map((r) => ({
        id: r.id ?? `d${++seq}`, organization_id: r.organization_id, location_id: r.location_id ?? 'loc-1',
        robot_id: r.robot_id ?? 'robot-1', robot_name: r.robot_name ?? 'rover', part_id: r.part_id ?? 'part-1',
        part_name: r.part_name ?? 'rover-main', component_type: r.component_type ?? 'rdk:component:sensor',
        component_name: r.component_name ?? 'thermo', method_name: r.method_name ?? 'Readings', tags: r.tags ?? [],
        t: r.time_received.toISOString(), data: r.data,
      }));
      await admin.run(
        `INSERT INTO tabular_data SELECT r->>'id', r->>'organization_id', r->>'location_id', r->>'robot_id',
           r->>'robot_name', r->>'part_id', r->>'part_name', r->>'component_type', r->>'component_name',
           r->>'method_name', '{}'::JSON, CAST(r->'tags' AS VARCHAR[]), (r->>'t')::TIMESTAMPTZ,
           (r->>'t')::TIMESTAMPTZ, (r->>'t')::TIMESTAMPTZ, r->'data'
         FROM (SELECT unnest(CAST($1::JSON AS JSON[])) AS r)`,
        [JSON.stringify(batch)],
      );
    },
    close() {
      admin.closeSync();
      instance.closeSync();
    },
  };
}
