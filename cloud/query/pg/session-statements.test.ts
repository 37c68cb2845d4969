// Session statements drivers send, the settings they may change, and the PostgreSQL spellings rewritten for DuckDB.
import test from 'ava';
import { StatusError } from '../../../core/serving/status-error.js';
import { normalizeDialect, toCatalogSchemas } from './pg-dialect.js';
import { parseSessionStatement, SessionSettings } from './session-statements.js';

test('SET, SHOW, RESET, transactions and cursors are recognised; SELECT and DDL are not', (t) => {
  t.deepEqual(parseSessionStatement("SET application_name = 'x'"), { kind: 'set', name: 'application_name', value: 'x' });
  t.deepEqual(parseSessionStatement('set session DateStyle to ISO, MDY;'), { kind: 'set', name: 'datestyle', value: 'ISO, MDY' });
  t.deepEqual(parseSessionStatement("SET TIME ZONE 'UTC'"), { kind: 'set', name: 'timezone', value: 'UTC' });
  t.deepEqual(parseSessionStatement('SHOW TRANSACTION ISOLATION LEVEL'), { kind: 'show', name: 'transaction_isolation' });
  t.deepEqual(parseSessionStatement('/* c */ BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY'), { kind: 'begin' });
  t.deepEqual(parseSessionStatement('END'), { kind: 'commit', tag: 'COMMIT' });
  t.deepEqual(parseSessionStatement('DECLARE "c1" CURSOR WITHOUT HOLD FOR SELECT 1'), { kind: 'declare', cursor: 'c1', query: 'SELECT 1' });
  t.deepEqual(parseSessionStatement('FETCH FORWARD 2000 FROM "c1"'), { kind: 'fetch', cursor: 'c1', count: 2000, tag: 'FETCH' });
  t.deepEqual(parseSessionStatement('CLOSE ALL'), { kind: 'close', cursor: 'all' });
  t.is(parseSessionStatement('SELECT 1'), undefined);
  t.is(parseSessionStatement('DROP TABLE readings'), undefined);
  t.throws(() => parseSessionStatement('BEGIN READ WRITE'), { instanceOf: StatusError, message: /read-only; READ WRITE transactions are refused/ });
  t.throws(() => parseSessionStatement('SET TRANSACTION READ WRITE'), { instanceOf: StatusError, message: /read-only/ });
});

test("only the listed settings change, with accepted values; search_path only names the organisation's schema", (t) => {
  const s = new SessionSettings({ application_name: 'psql', client_encoding: 'UTF8', DateStyle: 'ISO', bogus: 'x' });
  t.is(s.get('application_name'), 'psql');
  t.is(s.set('application_name', 'dbeaver'), 'application_name');
  t.is(s.get('application_name'), 'dbeaver');
  t.is(s.set('extra_float_digits', '3'), undefined);
  t.is(s.set('search_path', '"$user", public'), undefined);
  t.throws(() => s.set('search_path', 'tenant_b'), { message: 'SET search_path: "tenant_b" is not accepted (only schema "public" and pg_catalog)' });
  t.throws(() => s.set('client_encoding', 'LATIN1'), { message: /client_encoding: "LATIN1" is not accepted/ });
  t.throws(() => s.set('work_mem', '1GB'), { message: /SET work_mem: only application_name, extra_float_digits, datestyle, client_encoding, search_path/ });
  t.throws(() => s.get('no_such_setting'), { message: 'unrecognized configuration parameter "no_such_setting"' });
  s.reset('all');
  t.is(s.get('application_name'), '');
});

test('PostgreSQL spellings become DuckDB ones outside literals; catalog qualifiers point at the org catalog', (t) => {
  t.is(normalizeDialect("c.relname OPERATOR(pg_catalog.~) '^(readings)$' COLLATE pg_catalog.default", 'u'), "c.relname   ~ '(?s).*(?:^(readings)$).*' ");
  t.is(normalizeDialect("SELECT x::pg_catalog.text, 'pg_catalog.x ~ y', current_user", "o'x"), "SELECT x::text, 'pg_catalog.x ~ y', 'o''x'");
  t.is(normalizeDialect("a !~* 'B'", 'u'), "a  !~ '(?si).*(?:B).*'");
  t.is(
    toCatalogSchemas("SELECT pg_catalog.format_type(1, 2) FROM pg_catalog.pg_class, information_schema.tables WHERE x = 'pg_catalog.pg_class'"),
    "SELECT format_type(1, 2) FROM pgc.pg_class, isc.tables WHERE x = 'pg_catalog.pg_class'",
  );
});
