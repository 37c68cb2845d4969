// Result column names as PostgreSQL gives them (its FigureColname): the alias, else the last part of a
// column reference, else a function's name (`count(*)` is `count`, not DuckDB's `count_star()`), a cast's
// operand or type, `case` for CASE, and `?column?` for anything else. Read from DuckDB's parse tree.
import type { Tree } from '../sql/statement-inspector.js';

const DUCKDB_FUNCTION_NAMES: Record<string, string> = { count_star: 'count' };

function figure(expr: Tree): string | undefined {
  const alias = String(expr.alias ?? '');
  if (alias) return alias;
  switch (String(expr.class)) {
    case 'COLUMN_REF': {
      const names = expr.column_names as string[];
      return names[names.length - 1];
    }
    case 'FUNCTION':
    case 'AGGREGATE':
    case 'WINDOW': {
      const name = String(expr.function_name ?? '');
      // Operators (`a + b`) and DuckDB's internal names for syntax are not names PostgreSQL would show.
      if (!/^[a-z_][a-z0-9_]*$/i.test(name) || name === 'list_value') return name === 'list_value' ? 'array' : undefined;
      return DUCKDB_FUNCTION_NAMES[name] ?? name;
    }
    case 'CAST': {
      const inner = figure(expr.child as Tree);
      if (inner) return inner;
      const type = (expr.cast_type as Tree | undefined)?.id;
      return castTypeName(String(type ?? ''));
    }
    case 'CASE':
      return 'case';
    default:
      return undefined;
  }
}

function castTypeName(duckdbType: string): string | undefined {
  const names: Record<string, string> = {
    INTEGER: 'int4',
    BIGINT: 'int8',
    SMALLINT: 'int2',
    DOUBLE: 'float8',
    FLOAT: 'float4',
    VARCHAR: 'text',
    BOOLEAN: 'bool',
    DATE: 'date',
    TIMESTAMP: 'timestamp',
    TIMESTAMP_TZ: 'timestamptz',
    DECIMAL: 'numeric',
  };
  return names[duckdbType];
}

/**
 * PostgreSQL's names for the columns of `node`, falling back to DuckDB's own where the select list
 * cannot be matched one-to-one to the result (a `*`, a set operation, a column count mismatch).
 */
export function postgresColumnNames(node: Tree | undefined, duckdbNames: readonly string[]): string[] {
  if (!node || node.type !== 'SELECT_NODE') return [...duckdbNames];
  const list = node.select_list as Tree[] | undefined;
  if (!list || list.length !== duckdbNames.length || list.some((e) => e.class === 'STAR')) return [...duckdbNames];
  return list.map((e, i) => {
    if (String(e.alias ?? '')) return duckdbNames[i];
    return figure(e) ?? '?column?';
  });
}
