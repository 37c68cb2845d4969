// A real cloud Store (cloud/store) in a temporary data dir, with helpers to add tabular points, for tests
// and benchmarks of the query engine without a running cloud server.
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../store/store.js';

export interface Reading {
  id?: string;
  internal?: boolean;
  organization_id: string;
  location_id?: string;
  robot_id?: string;
  robot_name?: string | null;
  part_id?: string;
  part_name?: string;
  component_type?: string;
  component_name?: string;
  method_name?: string;
  tags?: string[];
  time_received: Date;
  /** Overrides time_received with a timestamp text of microsecond precision. */
  time_received_text?: string;
  data: unknown;
}

export interface TabularFixture {
  store: Store;
  instance: DuckDBInstance;
  connect(): Promise<DuckDBConnection>;
  insert(rows: Reading[]): Promise<void>;
  close(): Promise<void>;
}

export async function createTabularFixture(): Promise<TabularFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'query-fixture-'));
  const store = await Store.open(dir, { readers: 1 });
  let seq = 0;
  return {
    store,
    instance: store.instance,
    connect: () => store.instance.connect(),
    async insert(rows) {
      // One statement for the whole batch: the rows travel as one JSON array parameter.
      const batch = rows.map((r, i) => ({
        id: r.id ?? `d${seq + i + 1}`,
        organization_id: r.organization_id,
        location_id: r.location_id ?? 'loc-1',
        robot_id: r.robot_id ?? 'robot-1',
        robot_name: 'robot_name' in r ? (r.robot_name ?? null) : 'rover',
        part_id: r.part_id ?? 'part-1',
        part_name: r.part_name ?? 'rover-main',
        component_type: r.component_type ?? 'rdk:component:sensor',
        component_name: r.component_name ?? 'thermo',
        method_name: r.method_name ?? 'Readings',
        tags: r.tags ?? [],
        t: r.time_received_text ?? r.time_received.toISOString(),
        data: r.data,
        internal: r.internal ?? false,
        seq: seq + i + 1,
      }));
      seq += rows.length;
      await store.execute(
        `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id,
           part_name, component_type, component_name, method_name, method_parameters, tags, time_requested,
           time_received, time_synced, data, internal)
         SELECT (r->>'seq')::BIGINT, r->>'id', r->>'organization_id', r->>'location_id', r->>'robot_id',
           r->>'robot_name', r->>'part_id', r->>'part_name', r->>'component_type', r->>'component_name',
           r->>'method_name', '{}'::JSON, CAST(r->'tags' AS VARCHAR[]), (r->>'t')::TIMESTAMPTZ,
           (r->>'t')::TIMESTAMPTZ, (r->>'t')::TIMESTAMPTZ, r->'data', (r->>'internal')::BOOLEAN
         FROM (SELECT unnest(CAST($1::JSON AS JSON[])) AS r)`,
        [JSON.stringify(batch)],
      );
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
