// Which kind a statement is: a catalog query (pg_catalog, information_schema, catalog functions; answered
// by the session's private catalog instance) or a data query (everything else; the sandbox decides), and
// the SQL behind a pipeline sink's relation.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Tree } from '../sql/statement-inspector.js';
import { sqlString } from '../sql/readings-view.js';
import { allowedFunctions } from '../sql/function-allowlist.js';
import { CATALOG_FUNCTIONS, CATALOG_RELATIONS } from './catalog-relations.js';

/** The statement tree of one statement as DuckDB's parser gives it, or undefined if it does not parse as one. */
export async function parseTree(conn: DuckDBConnection, sql: string): Promise<Tree | undefined> {
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const parsed = JSON.parse(String(reader.getRows()[0][0])) as Tree;
  if (parsed.error) return undefined;
  const statements = parsed.statements as Tree[];
  return statements.length === 1 ? (statements[0].node as Tree) : undefined;
}

export const catalogTables = new Set(CATALOG_RELATIONS.pgc);

/**
 * A sink's documents, oldest window first: the window's end, the document's position in its run, and the
 * document as JSON (relaxed extended JSON, as the pipeline store keeps it).
 */
export const sinkSelect = (pipelineId: string) =>
  `SELECT data_end, position, doc::JSON AS doc FROM main.query_data_pipeline_sink WHERE pipeline_id = ${sqlString(pipelineId)}`;
const catalogOnlyFunctions = new Set<string>(CATALOG_FUNCTIONS.filter((f) => !allowedFunctions.has(f)));

/**
 * A catalog query names a pg_catalog or information_schema relation, or a catalog function, and no other
 * table. Everything else is a data query, and the sandbox decides about it with its own rules and messages.
 */
export function isCatalogQuery(tree: Tree, sinks: ReadonlySet<string>): boolean {
  let catalog = false;
  let other = false;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const obj = value as Tree;
    if (obj.type === 'BASE_TABLE' && 'table_name' in obj) {
      const schema = String(obj.schema_name ?? '').toLowerCase();
      const name = String(obj.table_name).toLowerCase();
      if (schema === 'pg_catalog' || schema === 'information_schema' || (schema === '' && catalogTables.has(name))) catalog = true;
      else if (schema !== '' || name === 'readings' || sinks.has(name)) other = true;
    }
    if (typeof obj.class === 'string' && 'function_name' in obj && catalogOnlyFunctions.has(String(obj.function_name).toLowerCase())) catalog = true;
    Object.values(obj).forEach(visit);
  };
  visit(tree);
  return catalog && !other;
}
