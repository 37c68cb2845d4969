// The session statements drivers and BI tools send around their queries: SET/SHOW/RESET of a few harmless
// settings, transaction blocks around read-only work, and cursors (DECLARE/FETCH/CLOSE, which psycopg2's
// server-side cursors use). They are answered here and never reach DuckDB; every other non-SELECT stays
// refused by the sandbox. Recognised by their leading keywords after comments are stripped.
import { permissionDenied, invalidArgument, notFound } from '../../../core/serving/status-error.js';

export const SCHEMA = 'public';
export const SERVER_VERSION = '16.0';

/** Settings a client may change, with the values each accepts. */
const SETTABLE: Record<string, (v: string) => string | undefined> = {
  application_name: (v) => (v.length <= 63 ? v : undefined),
  extra_float_digits: (v) => (/^-?\d+$/.test(v) && Number(v) >= -15 && Number(v) <= 3 ? v : undefined),
  // Values are always sent in ISO order; accept what asks for ISO (psycopg2, JDBC) and nothing else.
  datestyle: (v) => (/^iso(\s*,\s*(mdy|dmy|ymd))?$/i.test(v) ? 'ISO, MDY' : undefined),
  client_encoding: (v) => (/^(utf-?8|unicode)$/i.test(v) ? 'UTF8' : undefined),
  search_path: (v) => searchPath(v),
  timezone: (v) => (/^(utc|gmt|etc\/utc|z|0|\+00(:00)?)$/i.test(v) ? 'UTC' : undefined),
  intervalstyle: (v) => (/^postgres$/i.test(v) ? 'postgres' : undefined),
  bytea_output: (v) => (/^hex$/i.test(v) ? 'hex' : undefined),
  standard_conforming_strings: (v) => (/^on$/i.test(v) ? 'on' : undefined),
  client_min_messages: (v) => (/^(debug[1-5]?|log|notice|warning|error)$/i.test(v) ? v.toLowerCase() : undefined),
  statement_timeout: (v) => (/^\d+(ms|s)?$/.test(v) ? v : undefined),
  lock_timeout: (v) => (/^\d+(ms|s)?$/.test(v) ? v : undefined),
  idle_in_transaction_session_timeout: (v) => (/^\d+(ms|s)?$/.test(v) ? v : undefined),
  default_transaction_read_only: (v) => (/^(on|true)$/i.test(v) ? 'on' : undefined),
  transaction_read_only: (v) => (/^(on|true)$/i.test(v) ? 'on' : undefined),
};

/** Only the organisation's own schema (and the catalog, always searched) may be on the search path. */
function searchPath(v: string): string | undefined {
  const parts = v
    .split(',')
    .map((p) => p.trim().replace(/^"(.*)"$/, '$1'))
    .filter(Boolean);
  if (parts.length === 0) return undefined;
  return parts.every((p) => [SCHEMA, '$user', 'pg_catalog'].includes(p)) ? parts.map((p) => (p === '$user' ? '"$user"' : p)).join(', ') : undefined;
}

export const DEFAULT_SETTINGS: Record<string, string> = {
  server_version: SERVER_VERSION,
  server_version_num: '160000',
  server_encoding: 'UTF8',
  client_encoding: 'UTF8',
  datestyle: 'ISO, MDY',
  intervalstyle: 'postgres',
  integer_datetimes: 'on',
  standard_conforming_strings: 'on',
  timezone: 'UTC',
  application_name: '',
  extra_float_digits: '1',
  search_path: '"$user", public',
  bytea_output: 'hex',
  client_min_messages: 'notice',
  statement_timeout: '0',
  lock_timeout: '0',
  idle_in_transaction_session_timeout: '0',
  transaction_isolation: 'read committed',
  default_transaction_isolation: 'read committed',
  default_transaction_read_only: 'on',
  transaction_read_only: 'on',
  max_identifier_length: '63',
  is_superuser: 'off',
  lc_collate: 'C.UTF-8',
  lc_ctype: 'C.UTF-8',
  max_index_keys: '32',
  session_authorization: '',
};

/** ParameterStatus names as PostgreSQL spells them at start-up and when they change. */
export const REPORTED: Record<string, string> = {
  server_version: 'server_version',
  server_encoding: 'server_encoding',
  client_encoding: 'client_encoding',
  datestyle: 'DateStyle',
  intervalstyle: 'IntervalStyle',
  integer_datetimes: 'integer_datetimes',
  standard_conforming_strings: 'standard_conforming_strings',
  timezone: 'TimeZone',
  application_name: 'application_name',
  is_superuser: 'is_superuser',
  session_authorization: 'session_authorization',
  default_transaction_read_only: 'default_transaction_read_only',
};

export type SessionStatement =
  | { kind: 'set'; name: string; value: string }
  | { kind: 'reset'; name: string | 'all' }
  | { kind: 'show'; name: string }
  | { kind: 'begin' }
  | { kind: 'commit'; tag: string }
  | { kind: 'rollback' }
  | { kind: 'declare'; cursor: string; query: string }
  | { kind: 'fetch'; cursor: string; count: number | 'all'; tag: 'FETCH' | 'MOVE' }
  | { kind: 'close'; cursor: string | 'all' }
  | { kind: 'deallocate'; name: string | 'all' }
  | { kind: 'discard' };

const strip = (sql: string) =>
  sql
    .replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ')
    .trim()
    .replace(/;\s*$/, '')
    .trim();
const ident = (s: string) => (s.startsWith('"') ? s.slice(1, -1).replace(/""/g, '"') : s.toLowerCase());
const IDENT = '("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)';

function settingValue(raw: string): string {
  return raw
    .split(/,(?=(?:[^']*'[^']*')*[^']*$)/)
    .map((p) => p.trim())
    .map((p) => (p.startsWith("'") && p.endsWith("'") ? p.slice(1, -1).replace(/''/g, "'") : p))
    .map((p) => p.match(/^\$([A-Za-z_]\w*)?\$([\s\S]*)\$\1\$$/)?.[2] ?? p)
    .join(', ');
}

/** Recognises a session statement, or returns undefined for anything else (which goes to the sandbox). */
export function parseSessionStatement(sql: string): SessionStatement | undefined {
  const s = strip(sql);
  let m: RegExpMatchArray | null;
  if ((m = s.match(/^SET\s+(?:SESSION\s+|LOCAL\s+)?TIME\s+ZONE\s+(.+)$/is))) return { kind: 'set', name: 'timezone', value: settingValue(m[1]) };
  if ((m = s.match(/^SET\s+(?:SESSION\s+|LOCAL\s+)?SESSION\s+CHARACTERISTICS\s+AS\s+TRANSACTION\s+(.+)$/is))) {
    if (/READ\s+WRITE/i.test(m[1])) throw permissionDenied('SET SESSION CHARACTERISTICS: the database connection is read-only');
    return { kind: 'set', name: 'default_transaction_read_only', value: 'on' };
  }
  if ((m = s.match(/^SET\s+(?:SESSION\s+|LOCAL\s+)?TRANSACTION\s+(.+)$/is))) {
    if (/READ\s+WRITE/i.test(m[1])) throw permissionDenied('SET TRANSACTION: the database connection is read-only');
    return { kind: 'set', name: 'transaction_read_only', value: 'on' };
  }
  if ((m = s.match(new RegExp(`^SET\\s+(?:SESSION\\s+|LOCAL\\s+)?${IDENT}\\s*(?:=|\\s+TO\\s+)\\s*(.+)$`, 'is')))) {
    return { kind: 'set', name: ident(m[1]), value: settingValue(m[2]) };
  }
  if ((m = s.match(new RegExp(`^RESET\\s+${IDENT}$`, 'is')))) return { kind: 'reset', name: /^all$/i.test(m[1]) ? 'all' : ident(m[1]) };
  if (/^SHOW\s+TIME\s+ZONE$/is.test(s)) return { kind: 'show', name: 'timezone' };
  if (/^SHOW\s+TRANSACTION\s+ISOLATION\s+LEVEL$/is.test(s)) return { kind: 'show', name: 'transaction_isolation' };
  if ((m = s.match(new RegExp(`^SHOW\\s+${IDENT}$`, 'is')))) return { kind: 'show', name: ident(m[1]) };
  if ((m = s.match(/^(BEGIN|START\s+TRANSACTION)\b(.*)$/is))) {
    if (/READ\s+WRITE/i.test(m[2])) throw permissionDenied(`${m[1].toUpperCase()}: the database connection is read-only; READ WRITE transactions are refused`);
    return { kind: 'begin' };
  }
  if (/^(COMMIT|END)(\s+(WORK|TRANSACTION))?$/is.test(s)) return { kind: 'commit', tag: 'COMMIT' };
  if (/^(ROLLBACK|ABORT)(\s+(WORK|TRANSACTION))?$/is.test(s)) return { kind: 'rollback' };
  if (
    (m = s.match(
      new RegExp(
        `^DECLARE\\s+${IDENT}\\s+(?:BINARY\\s+)?(?:ASENSITIVE\\s+|INSENSITIVE\\s+)?(?:NO\\s+)?(?:SCROLL\\s+)?CURSOR\\s+(?:(?:WITH|WITHOUT)\\s+HOLD\\s+)?FOR\\s+([\\s\\S]+)$`,
        'i',
      ),
    ))
  ) {
    return { kind: 'declare', cursor: ident(m[1]), query: m[2] };
  }
  if ((m = s.match(new RegExp(`^(FETCH|MOVE)\\s+(?:(FORWARD|NEXT|ALL)\\s+)?(?:(\\d+|ALL)\\s+)?(?:(?:FROM|IN)\\s+)?${IDENT}$`, 'i')))) {
    const dir = (m[2] ?? '').toUpperCase();
    const n = (m[3] ?? '').toUpperCase();
    const count = dir === 'ALL' || n === 'ALL' ? 'all' : n ? Number(n) : 1;
    return { kind: 'fetch', cursor: ident(m[4]), count, tag: m[1].toUpperCase() as 'FETCH' | 'MOVE' };
  }
  if ((m = s.match(new RegExp(`^CLOSE\\s+${IDENT}$`, 'i')))) return { kind: 'close', cursor: /^all$/i.test(m[1]) ? 'all' : ident(m[1]) };
  if ((m = s.match(new RegExp(`^DEALLOCATE\\s+(?:PREPARE\\s+)?${IDENT}$`, 'i'))))
    return { kind: 'deallocate', name: /^all$/i.test(m[1]) ? 'all' : ident(m[1]) };
  if (/^DISCARD\s+ALL$/i.test(s)) return { kind: 'discard' };
  return undefined;
}

/** A session's settings: defaults plus what the client set, validated against SETTABLE. */
export class SessionSettings {
  private readonly values = new Map<string, string>(Object.entries(DEFAULT_SETTINGS));

  constructor(startup: Record<string, string>) {
    for (const [k, v] of Object.entries(startup)) {
      const name = k.toLowerCase();
      if (['user', 'database', 'options', 'replication'].includes(name)) continue;
      // Start-up parameters that are not settable here are ignored, as a server ignores unknown GUCs it
      // cannot apply silently; refusing them would make drivers fail to connect.
      const accept = SETTABLE[name];
      const value = accept?.(v);
      if (value !== undefined) this.values.set(name, value);
    }
  }

  /** Sets a value; returns the ParameterStatus name to report when it is one drivers track. */
  set(name: string, raw: string): string | undefined {
    const accept = SETTABLE[name];
    if (!accept) {
      throw permissionDenied(`SET ${name}: only ${Object.keys(SETTABLE).join(', ')} can be set on the database connection`);
    }
    const value = /^default$/i.test(raw) ? DEFAULT_SETTINGS[name] : accept(raw);
    if (value === undefined) {
      throw invalidArgument(`SET ${name}: "${raw}" is not accepted${name === 'search_path' ? ` (only schema "${SCHEMA}" and pg_catalog)` : ''}`);
    }
    this.values.set(name, value);
    return REPORTED[name];
  }

  reset(name: string | 'all'): void {
    if (name === 'all') {
      for (const k of Object.keys(SETTABLE)) this.values.set(k, DEFAULT_SETTINGS[k]);
      return;
    }
    if (!SETTABLE[name]) throw permissionDenied(`RESET ${name}: only ${Object.keys(SETTABLE).join(', ')} can be reset`);
    this.values.set(name, DEFAULT_SETTINGS[name]);
  }

  get(name: string): string {
    const v = this.values.get(name);
    if (v === undefined) throw notFound(`unrecognized configuration parameter "${name}"`);
    return v;
  }

  /** Everything SHOW ALL lists. */
  all(): [string, string][] {
    return [...this.values.entries()].sort(([a], [b]) => a.localeCompare(b));
  }
}
