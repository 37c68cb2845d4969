// PostgreSQL spellings that DuckDB's parser does not take, rewritten outside string literals, quoted
// identifiers and comments: `OPERATOR(pg_catalog.~)`, `COLLATE pg_catalog.default`, schema-qualified
// casts (`::pg_catalog.regclass`) and `current_user`. For catalog queries, the pg_catalog and
// information_schema qualifiers are also pointed at the organisation's catalog schemas (see catalog.ts),
// because DuckDB's own catalog of those names cannot be replaced.

interface Segment {
  code: boolean;
  text: string;
}

/** Splits SQL into code and non-code (literals, quoted identifiers, comments) so only code is rewritten. */
function mapCode(sql: string, rewrite: (code: string) => string): string {
  return segments(sql)
    .map((s) => (s.code ? rewrite(s.text) : s.text))
    .join('');
}

function segments(sql: string): Segment[] {
  const out: Segment[] = [];
  let code = '';
  let i = 0;
  const flush = () => {
    if (code) out.push({ code: true, text: code });
    code = '';
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    let end = -1;
    if (c === "'" || ((c === 'E' || c === 'e') && next === "'" && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? ''))) {
      const start = c === "'" ? i : i + 1;
      const escapes = c !== "'";
      let j = start + 1;
      for (; j < sql.length; j++) {
        if (escapes && sql[j] === '\\') {
          j++;
          continue;
        }
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") {
            j++;
            continue;
          }
          break;
        }
      }
      end = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < sql.length; j++) {
        if (sql[j] === '"') {
          if (sql[j + 1] === '"') {
            j++;
            continue;
          }
          break;
        }
      }
      end = j + 1;
    } else if (c === '-' && next === '-') {
      const j = sql.indexOf('\n', i);
      end = j < 0 ? sql.length : j;
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      end = j < 0 ? sql.length : j + 2;
    } else if (c === '$') {
      const tag = sql.slice(i).match(/^\$([A-Za-z_][A-Za-z0-9_]*)?\$/);
      if (tag && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        end = close < 0 ? sql.length : close + tag[0].length;
      }
    }
    if (end < 0) {
      code += c;
      i++;
      continue;
    }
    flush();
    out.push({ code: false, text: sql.slice(i, end) });
    i = end;
  }
  flush();
  return out;
}

/**
 * PostgreSQL's `~` matches anywhere in the string; DuckDB's `~` must match the whole string. A pattern
 * literal after `~`, `!~`, `~*` or `!~*` is therefore wrapped to match anywhere (and case-insensitively
 * for the `*` forms), which is what psql's and the drivers' catalog filters mean.
 */
function regexOperators(sql: string): string {
  const parts = segments(sql);
  for (let i = 0; i + 1 < parts.length; i++) {
    const op = parts[i].code ? parts[i].text.match(/(!?)~(\*?)\s*$/) : null;
    const lit = parts[i + 1];
    if (!op || lit.code || !lit.text.startsWith("'")) continue;
    parts[i].text = parts[i].text.slice(0, parts[i].text.length - op[0].length) + ` ${op[1]}~ `;
    const pattern = lit.text.slice(1, -1);
    lit.text = `'(?s${op[2] ? 'i' : ''}).*(?:${pattern}).*'`;
  }
  return parts.map((p) => p.text).join('');
}

/** Which characters of `sql` are code (not inside a literal, quoted identifier or comment). */
function codeMask(sql: string): boolean[] {
  const mask: boolean[] = [];
  for (const seg of segments(sql)) for (let i = 0; i < seg.text.length; i++) mask.push(seg.code);
  return mask;
}

/** The index of the parenthesis closing the one at `open`, counting only parentheses in code. */
function closingParen(sql: string, mask: boolean[], open: number): number {
  let depth = 0;
  for (let i = open; i < sql.length; i++) {
    if (!mask[i]) continue;
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * Rewrites each code match of `pattern` (which must end at an opening parenthesis) together with its
 * parenthesised argument; `replace` gets the match and the argument text and returns the new text.
 */
function rewriteCalls(sql: string, pattern: RegExp, replace: (m: RegExpExecArray, arg: string, after: string) => [string, number] | undefined): string {
  for (let guard = 0; guard < 100; guard++) {
    const mask = codeMask(sql);
    const re = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    let m: RegExpExecArray | null;
    let changed = false;
    while ((m = re.exec(sql))) {
      if (!mask[m.index]) continue;
      const open = m.index + m[0].length - 1;
      const close = closingParen(sql, mask, open);
      if (close < 0) continue;
      const out = replace(m, sql.slice(open + 1, close), sql.slice(close + 1));
      if (!out) continue;
      sql = sql.slice(0, m.index) + out[0] + sql.slice(close + 1 + out[1]);
      changed = true;
      break;
    }
    if (!changed) return sql;
  }
  return sql;
}

/**
 * `x = ANY (array)` and `x <> ALL (array)` over an array (not a subquery) become IN / NOT IN over its
 * unnested elements, and a scalar `string_to_array(..) s` in FROM becomes a one-row subquery, as
 * PostgreSQL treats a scalar function in FROM.
 */
function arrayForms(sql: string): string {
  sql = rewriteCalls(sql, /(=\s*ANY|<>\s*ALL|!=\s*ALL)\s*\(/i, (m, arg) => {
    if (/^\s*(SELECT|WITH|VALUES)\b/i.test(arg)) return undefined;
    // DuckDB cannot unnest a parameter of unknown type: a bare `$n` is taken as text[] (pgcli's
    // `relkind = ANY($1)` style); cast it (`$1::BIGINT[]`) for other element types.
    const list = /^\s*\$\d+\s*$/.test(arg) ? `${arg.trim()}::VARCHAR[]` : arg;
    return [`${/ANY/i.test(m[1]) ? 'IN' : 'NOT IN'} (SELECT unnest(${list}))`, 0];
  });
  // The same for a subquery that unnests a bare parameter, as pgcli writes `IN (SELECT unnest($1))`.
  sql = sql.replace(/\(\s*SELECT\s+unnest\s*\(\s*(\$\d+)\s*\)\s*\)/gi, '(SELECT unnest($1::VARCHAR[]))');
  // PostgreSQL names a one-column function's output after its alias (`generate_series(..) s` has column s).
  sql = rewriteCalls(sql, /(?<=(?:,|\bFROM|\bJOIN)\s*(?:pg_catalog\s*\.\s*)?)generate_series\s*\(/i, (_m, arg, after) => {
    if (/^\s+(?:AS\s+)?[A-Za-z_]\w*\s*\(/i.test(after)) return undefined; // already names its column
    const alias = after.match(/^\s+(?:AS\s+)?(?!(?:AS|WHERE|JOIN|ON|LEFT|RIGHT|INNER|CROSS|ORDER|GROUP|LIMIT|UNION)\b)([A-Za-z_]\w*)\b/i);
    if (!alias) return undefined;
    return [`generate_series(${arg}) AS ${alias[1]}(${alias[1]})`, alias[0].length];
  });
  return rewriteCalls(sql, /(?<=(?:,|\bFROM)\s*)string_to_array\s*\(/i, (_m, arg, after) => {
    const alias = after.match(/^\s+(?:AS\s+)?(?!(?:AS|WHERE|JOIN|ON|LEFT|RIGHT|INNER|CROSS|ORDER|GROUP|LIMIT|UNION)\b)([A-Za-z_]\w*)\b/i);
    if (!alias) return undefined;
    return [`(SELECT string_to_array(${arg}) AS ${alias[1]}) AS ${alias[1]}_row`, alias[0].length];
  });
}

/** Rewrites the PostgreSQL-only syntax every statement may carry (data and catalog queries alike). */
export function normalizeDialect(sql: string, username: string): string {
  const userLiteral = `'${username.replace(/'/g, "''")}'`;
  const rewritten = mapCode(sql, (code) =>
    code
      .replace(/OPERATOR\s*\(\s*(?:pg_catalog\s*\.\s*)?([^\s()]+)\s*\)/gi, ' $1 ')
      .replace(/COLLATE\s+(?:pg_catalog\s*\.\s*)?(?:"default"|default|"C"|C\b|"POSIX")/gi, '')
      .replace(/::\s*pg_catalog\s*\.\s*/gi, '::')
      .replace(/\b(current_user|session_user|current_role)\b(?!\s*\()/gi, userLiteral),
  );
  return arrayForms(regexOperators(rewritten));
}

/** Points pg_catalog and information_schema at the organisation's catalog schemas (catalog queries only). */
export function toCatalogSchemas(sql: string): string {
  return mapCode(sql, (code) =>
    code
      // Functions resolve through the catalog instance's search path (pgc first), so only drop the prefix.
      .replace(/\b(?:pg_catalog|information_schema)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*\s*\()/gi, '$1')
      // An OID array as text (pgcli's function list: `proargtypes::regtype[]`). The only OID arrays are
      // pg_proc's, which is empty, so the elements are left as numbers (format_type's subquery cannot run
      // per element inside a lambda).
      .replace(/\b([A-Za-z_][\w.]*)\s*::\s*regtype\s*\[\s*\]/gi, 'CAST($1 AS VARCHAR[])')
      .replace(/\b([A-Za-z_][\w.]*)\s*::\s*regtype\b/gi, 'format_type($1, NULL)')
      .replace(/\bpg_catalog\s*\.\s*/gi, 'pgc.')
      .replace(/\binformation_schema\s*\.\s*/gi, 'isc.'),
  );
}
