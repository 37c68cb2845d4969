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
  return segments(sql).map((s) => (s.code ? rewrite(s.text) : s.text)).join('');
}

function segments(sql: string): Segment[] {
  const out: Segment[] = [];
  let code = '';
  let i = 0;
  const flush = () => { if (code) out.push({ code: true, text: code }); code = ''; };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    let end = -1;
    if (c === "'" || ((c === 'E' || c === 'e') && next === "'" && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? ''))) {
      const start = c === "'" ? i : i + 1;
      const escapes = c !== "'";
      let j = start + 1;
      for (; j < sql.length; j++) {
        if (escapes && sql[j] === '\\') { j++; continue; }
        if (sql[j] === "'") { if (sql[j + 1] === "'") { j++; continue; } break; }
      }
      end = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < sql.length; j++) { if (sql[j] === '"') { if (sql[j + 1] === '"') { j++; continue; } break; } }
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
    if (end < 0) { code += c; i++; continue; }
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

/** Rewrites the PostgreSQL-only syntax every statement may carry (data and catalog queries alike). */
export function normalizeDialect(sql: string, username: string): string {
  const userLiteral = `'${username.replace(/'/g, "''")}'`;
  const rewritten = mapCode(sql, (code) =>
    code
      .replace(/OPERATOR\s*\(\s*(?:pg_catalog\s*\.\s*)?([^\s()]+)\s*\)/gi, ' $1 ')
      .replace(/COLLATE\s+(?:pg_catalog\s*\.\s*)?(?:"default"|default|"C"|C\b|"POSIX")/gi, '')
      .replace(/::\s*pg_catalog\s*\.\s*/gi, '::')
      .replace(/\b(current_user|session_user|current_role)\b(?!\s*\()/gi, userLiteral)
      // PostgreSQL names a one-column function's output after its alias (`generate_series(..) s` has column s).
      .replace(/(\bgenerate_series\s*\((?:[^()]|\([^()]*\))*\))\s+(?:AS\s+)?(?!(?:WHERE|JOIN|ON|LEFT|RIGHT|INNER|CROSS|ORDER|GROUP|LIMIT|WITH|UNION)\b)([A-Za-z_]\w*)\b(?!\s*\()/gi, '$1 AS $2($2)'),
  );
  return regexOperators(rewritten);
}

/** Points pg_catalog and information_schema at the organisation's catalog schemas (catalog queries only). */
export function toCatalogSchemas(sql: string): string {
  return mapCode(sql, (code) =>
    code
      // Functions resolve through the catalog instance's search path (pgc first), so only drop the prefix.
      .replace(/\b(?:pg_catalog|information_schema)\s*\.\s*([A-Za-z_][A-Za-z0-9_]*\s*\()/gi, '$1')
      .replace(/\bpg_catalog\s*\.\s*/gi, 'pgc.')
      .replace(/\binformation_schema\s*\.\s*/gi, 'isc.'),
  );
}
