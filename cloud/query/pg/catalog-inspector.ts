// Checks a catalog query (one that does not read `readings`) before it runs in the organisation's catalog
// instance: one SELECT, relations only from the catalog listed in catalog.ts (or the query's own CTEs),
// functions only from the sandbox's allow-list plus the catalog's own. Everything else is refused naming
// the rule, so DuckDB's own catalogue functions (duckdb_settings(), ...) stay out of reach as well.
import { permissionDenied } from '../../../core/serving/status-error.js';
import { allowedFunctions, allowedTableFunctions, refusalReason } from '../sql/function-allowlist.js';
import type { Tree } from '../sql/statement-inspector.js';
import { CATALOG_FUNCTIONS, CATALOG_RELATIONS } from './catalog-relations.js';

const catalogFunctions = new Set<string>(CATALOG_FUNCTIONS);
const relations = { pgc: new Set(CATALOG_RELATIONS.pgc), isc: new Set(CATALOG_RELATIONS.isc) };
const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);
const RULE = 'catalog queries may read only pg_catalog and information_schema relations that describe your own tables, and "readings"';

function collectCteNames(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectCteNames(v, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const obj = value as Tree;
  const map = (obj.cte_map as Tree | undefined)?.map as { key: string }[] | undefined;
  if (map) for (const c of map) into.add(c.key.toLowerCase());
  if (obj.type === 'RECURSIVE_CTE_NODE') into.add(String(obj.cte_name).toLowerCase());
  for (const v of Object.values(obj)) collectCteNames(v, into);
}

export function checkCatalogStatement(node: Tree): void {
  if (!QUERY_NODES.has(String(node.type))) throw permissionDenied(`${String(node.type)} queries are not allowed`);
  const ctes = new Set<string>();
  collectCteNames(node, ctes);
  walk(node, ctes);
}

function walk(value: unknown, ctes: ReadonlySet<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) walk(v, ctes);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const obj = value as Tree;
  if (obj.type === 'BASE_TABLE' && 'table_name' in obj) checkRelation(obj, ctes);
  if (obj.type === 'TABLE_FUNCTION') {
    const name = String((obj.function as Tree).function_name ?? '').toLowerCase();
    if (!allowedTableFunctions.has(name)) throw permissionDenied(`table function ${name}() is refused: ${refusalReason(name)}`);
    // The call itself is a table function, not the scalar of the same name; only its arguments are walked.
    for (const [key, v] of Object.entries(obj)) {
      if (key === 'function') walk((obj.function as Tree).children, ctes);
      else walk(v, ctes);
    }
    return;
  }
  if (typeof obj.class === 'string' && ['FUNCTION', 'AGGREGATE', 'WINDOW'].includes(obj.class) && 'function_name' in obj) checkFunction(obj);
  if (obj.type === 'SHOW_REF' || obj.type === 'PIVOT' || obj.type === 'COLUMN_DATA_REF') throw permissionDenied(`${String(obj.type)} is not allowed`);
  for (const v of Object.values(obj)) walk(v, ctes);
}

function checkRelation(ref: Tree, ctes: ReadonlySet<string>): void {
  const schema = String(ref.schema_name ?? '').toLowerCase();
  const name = String(ref.table_name).toLowerCase();
  if (ref.catalog_name) throw permissionDenied(`table ${String(ref.catalog_name)}.${schema}.${name}: ${RULE}`);
  if (schema === 'pgc' || schema === 'isc') {
    if (relations[schema].has(name)) return;
    throw permissionDenied(`table ${schema === 'pgc' ? 'pg_catalog' : 'information_schema'}.${name}: ${RULE}`);
  }
  if (schema === '' && (relations.pgc.has(name) || ctes.has(name))) return;
  throw permissionDenied(`table ${schema ? `${schema}.` : ''}${name}: ${RULE}`);
}

function checkFunction(fn: Tree): void {
  const name = String(fn.function_name ?? '').toLowerCase();
  const schema = String(fn.schema ?? '').toLowerCase();
  if (!['', 'main', 'pgc', 'isc'].includes(schema) || (fn.catalog && !['', 'system'].includes(String(fn.catalog)))) {
    throw permissionDenied(`function ${schema}.${name}: qualified function names are allowed only in pg_catalog`);
  }
  if (catalogFunctions.has(name) || allowedFunctions.has(name)) return;
  throw permissionDenied(`function ${name}() is refused: ${refusalReason(name)}`);
}
