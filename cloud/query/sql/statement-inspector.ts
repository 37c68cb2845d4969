// Reads a user's SQL through DuckDB's own parser (json_serialize_sql) and checks the whole statement tree
// against the sandbox rules. Using the real parser, not regexes, means that what is checked is exactly
// what DuckDB will run: comments, quoting and odd spacing cannot hide a table or a function.
import type { DuckDBConnection } from '@duckdb/node-api';
import { invalidArgument, permissionDenied } from '../../../core/serving/status-error.js';
import { allowedFunctions, allowedTableFunctions, refusalReason } from './function-allowlist.js';

/** The one relation that sandboxed SQL may read. */
export const READINGS = 'readings';

export type Tree = Record<string, unknown>;

const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE']);
const TABLE_REFS = new Set(['BASE_TABLE', 'JOIN', 'SUBQUERY', 'TABLE_FUNCTION', 'EXPRESSION_LIST', 'EMPTY', 'PIVOT']);
const EXPRESSIONS = new Set([
  'COLUMN_REF',
  'CONSTANT',
  'FUNCTION',
  'CAST',
  'COMPARISON',
  'CONJUNCTION',
  'OPERATOR',
  'CASE',
  'SUBQUERY',
  'STAR',
  'WINDOW',
  'BETWEEN',
  'LAMBDA',
  'LAMBDA_REF',
  'POSITIONAL_REFERENCE',
  'COLLATE',
  'AGGREGATE',
]);

/** What a caller may relax: the PostgreSQL endpoint binds `$n` parameters through DuckDB's prepared statements. */
export interface InspectOptions {
  allowParameters?: boolean;
  /**
   * Further relations the caller has created on the query's connection, scoped to the same organisation
   * (the PostgreSQL endpoint's pipeline-sink views), lower-case; they may be read like `readings`.
   */
  relations?: ReadonlySet<string>;
}

/**
 * Parses `sql` with DuckDB and throws a StatusError naming the broken rule unless it is one allowed SELECT.
 * Returns DuckDB's parse of the statement so callers (the PostgreSQL endpoint names columns from it)
 * need not parse twice.
 */
export async function inspectStatement(conn: DuckDBConnection, sql: string, options: InspectOptions = {}): Promise<Tree> {
  if (typeof sql !== 'string' || sql.trim() === '') throw invalidArgument('sql_query: must not be empty');
  const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [sql]);
  const parsed = JSON.parse(String(reader.getRows()[0][0])) as Tree;
  if (parsed.error) {
    const message = String(parsed.error_message ?? 'unparseable');
    if (/only select statements/i.test(message)) {
      const keyword = firstKeyword(sql);
      if (/^a (SELECT|WITH|FROM|VALUES|TABLE) /.test(keyword)) {
        throw permissionDenied(
          'sql_query: only SELECT statements are allowed, one per query; this text holds another statement or a construct the sandbox cannot check (such as PIVOT)',
        );
      }
      throw permissionDenied(`sql_query: only SELECT statements are allowed; ${keyword} is refused (no DDL, DML, SET, PRAGMA, COPY, ATTACH, INSTALL or LOAD)`);
    }
    throw invalidArgument(`sql_query: ${message}`);
  }
  const statements = parsed.statements as Tree[];
  if (statements.length !== 1) throw invalidArgument(`sql_query: exactly one statement is allowed, got ${statements.length}`);
  new TreeChecker(options).node(statements[0].node as Tree, new Set());
  return statements[0].node as Tree;
}

function firstKeyword(sql: string): string {
  const stripped = sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ').trim();
  return `a ${(stripped.match(/^[A-Za-z_]+/)?.[0] ?? 'non-SELECT').toUpperCase()} statement`;
}

const deny = (why: string) => permissionDenied(`sql_query: ${why}`);

class TreeChecker {
  constructor(private readonly options: InspectOptions) {}

  /** A query node: its CTEs are visible to later CTEs and to its body, never to themselves or earlier ones. */
  node(node: Tree, scope: ReadonlySet<string>): void {
    const type = String(node.type);
    if (!QUERY_NODES.has(type)) throw deny(`${type} queries are not allowed`);
    const inner = new Set(scope);
    const ctes = ((node.cte_map as Tree | undefined)?.map ?? []) as { key: string; value: Tree }[];
    for (const cte of ctes) {
      this.node((cte.value.query as Tree).node as Tree, inner);
      inner.add(cte.key.toLowerCase());
    }
    if (type === 'RECURSIVE_CTE_NODE') inner.add(String(node.cte_name).toLowerCase());
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'cte_map') this.any(value, inner);
    }
  }

  any(value: unknown, scope: ReadonlySet<string>): void {
    if (Array.isArray(value)) {
      for (const v of value) this.any(v, scope);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const obj = value as Tree;
    if (typeof obj.class === 'string') return this.expression(obj, scope);
    if (typeof obj.type === 'string' && 'alias' in obj && 'sample' in obj) return this.tableRef(obj, scope);
    if (typeof obj.type === 'string' && obj.type.endsWith('_NODE')) return this.node(obj, scope);
    if ('node' in obj && 'named_param_map' in obj) {
      if ((obj.named_param_map as unknown[]).length > 0 && !this.options.allowParameters)
        throw invalidArgument('sql_query: query parameters are not supported');
      return this.node(obj.node as Tree, scope);
    }
    for (const v of Object.values(obj)) this.any(v, scope);
  }

  expression(expr: Tree, scope: ReadonlySet<string>): void {
    const cls = String(expr.class);
    if (cls === 'PARAMETER') {
      if (this.options.allowParameters) return;
      throw invalidArgument('sql_query: query parameters are not supported');
    }
    if (!EXPRESSIONS.has(cls)) throw deny(`${cls} expressions are not allowed`);
    if (cls === 'FUNCTION' || cls === 'WINDOW' || cls === 'AGGREGATE') this.checkFunction(expr, allowedFunctions, 'function');
    for (const [key, v] of Object.entries(expr)) {
      if (key !== 'class') this.any(v, scope);
    }
  }

  tableRef(ref: Tree, scope: ReadonlySet<string>): void {
    const type = String(ref.type);
    if (!TABLE_REFS.has(type)) throw deny(`${type} (SHOW, DESCRIBE, SUMMARIZE and similar) is not allowed`);
    if (type === 'BASE_TABLE') {
      const name = String(ref.table_name);
      if (ref.schema_name || ref.catalog_name) {
        throw deny(
          `table ${[ref.catalog_name, ref.schema_name, name].filter(Boolean).join('.')}: only "${READINGS}" and your own CTEs can be read; schema- or catalogue-qualified names are refused`,
        );
      }
      if (ref.at_clause) throw deny('time travel (AT) is not allowed');
      const lower = name.toLowerCase();
      if (lower !== READINGS && !scope.has(lower) && !this.options.relations?.has(lower)) {
        throw deny(`table "${name}": only "${READINGS}" and your own CTEs can be read (no other tables, files or catalogue views)`);
      }
    }
    if (type === 'TABLE_FUNCTION') {
      const fn = ref.function as Tree;
      this.checkFunction(fn, allowedTableFunctions, 'table function');
      for (const [key, v] of Object.entries(fn)) {
        if (key !== 'class') this.any(v, scope);
      }
      for (const [key, v] of Object.entries(ref)) {
        if (key !== 'function') this.any(v, scope);
      }
      return;
    }
    for (const [key, v] of Object.entries(ref)) {
      if (key !== 'type') this.any(v, scope);
    }
  }

  checkFunction(fn: Tree, allowed: ReadonlySet<string>, kind: string): void {
    const name = String(fn.function_name ?? '');
    // The parser itself writes main.list_value for [a, b]; any other qualification could reach a user macro.
    const qualifiedOk = ['', 'main'].includes(String(fn.schema ?? '')) && ['', 'system'].includes(String(fn.catalog ?? ''));
    if (!qualifiedOk) throw deny(`${kind} ${[fn.catalog, fn.schema, name].filter(Boolean).join('.')}: qualified function names are not allowed`);
    if (!allowed.has(name.toLowerCase())) throw deny(`${kind} ${name}() is refused: ${refusalReason(name)}`);
  }
}
