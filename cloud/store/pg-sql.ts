// What PgStore does to statements and values so that modules see the same SQL and JS values as on
// DuckDB (the rules are in tabular.ts): `?` parameters become `$1`, `$2`, ... and the result types
// node-postgres would give differently are parsed the DuckDB way.
import pg from 'pg';

const rewritten = new Map<string, string>();
const MAX_CACHED = 2000;

/**
 * The statement with each `?` parameter numbered (`$1`, `$2`, ...). A `?` inside a string literal, a
 * quoted identifier, a dollar-quoted string or a comment is text, not a parameter. A statement that
 * numbers its parameters already is returned as it is; one that mixes both forms is refused, since
 * the numbers would not say which value is which.
 */
export function numberedParameters(sql: string): string {
  const cached = rewritten.get(sql);
  if (cached !== undefined) return cached;
  if (!sql.includes('?')) return sql;
  let out = '';
  let n = 0;
  let numbered = false;
  let i = 0;
  const len = sql.length;
  while (i < len) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      // A quoted literal or identifier; a doubled quote inside it is an escaped quote.
      let j = i + 1;
      for (;;) {
        if (j >= len) break;
        if (sql[j] === c) {
          if (sql[j + 1] === c) j += 2;
          else break;
        } else j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end < 0 ? len : end;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const j = end < 0 ? len : end + 2;
      out += sql.slice(i, j);
      i = j;
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag) {
        // A dollar-quoted string runs to the same tag.
        const end = sql.indexOf(tag[0], i + tag[0].length);
        const j = end < 0 ? len : end + tag[0].length;
        out += sql.slice(i, j);
        i = j;
      } else {
        if (/^\$\d/.test(sql.slice(i, i + 2))) numbered = true;
        out += c;
        i++;
      }
    } else if (c === '?') {
      out += `$${++n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  if (n > 0 && numbered) throw new Error(`a statement numbers its parameters ($1) or writes them as ?, not both: ${sql.slice(0, 200)}`);
  if (rewritten.size >= MAX_CACHED) rewritten.clear();
  rewritten.set(sql, out);
  return out;
}

// PostgreSQL type oids whose node-postgres parsing differs from the DuckDB values modules expect.
const INT8 = 20;
const NUMERIC = 1700;
const JSON_OID = 114;
const JSONB = 3802;
const INT8_ARRAY = 1016;

const parseBigIntArray = (text: string): (bigint | null)[] =>
  (pg.types.getTypeParser(INT8_ARRAY as never, 'text') as (v: string) => (string | null)[])(text).map((v) => (v === null ? null : BigInt(v)));

const textParsers: Partial<Record<number, (text: string) => unknown>> = {
  // DuckDB gives BIGINT (and count(*)) as bigint; node-postgres as a string.
  [INT8]: (text) => BigInt(text),
  [INT8_ARRAY]: parseBigIntArray,
  // DuckDB gives DECIMAL as a number (sum() of an INTEGER column is BIGINT there, NUMERIC here).
  [NUMERIC]: (text) => Number(text),
  // DuckDB gives a JSON column as its text; node-postgres would parse it.
  [JSON_OID]: (text) => text,
  [JSONB]: (text) => text,
};

/** The `types` option of a pg Pool or Client: the parsers above, node-postgres' own for the rest. */
export const duckdbLikeTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    const parser = format !== 'binary' ? textParsers[oid] : undefined;
    return parser ?? pg.types.getTypeParser(oid, format ?? 'text');
  }) as typeof pg.types.getTypeParser,
};
