// The organisation's read-only pg_catalog and information_schema. They live in a private in-memory DuckDB
// instance per session that holds nothing but the organisation's own relations (readings), described as
// PostgreSQL describes a table, plus the built-in types, its one database, schema and role. A catalog query
// therefore cannot see another organisation or the cloud's own tables: they do not exist in that instance.
// The instance has no file or network access and its own memory and thread budget, and every statement is
// still checked (catalog-inspector.ts) so only the relations and functions listed in catalog-relations.ts can
// be named.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Oid, TYPE_NAMES, typeSize } from './pg-types.js';
import { SCHEMA } from './session-statements.js';

export interface CatalogColumn {
  name: string;
  typeOid: number;
}

export interface CatalogRelation {
  name: string;
  columns: readonly CatalogColumn[];
}

export interface CatalogIdentity {
  database: string;
  username: string;
  serverVersion: string;
  backendPid: number;
  settings: () => [string, string][];
}

const NS = { pg_catalog: 11, public: 2200, information_schema: 13000 } as const;
const ROLE_OID = 10;
const DATABASE_OID = 16384;
const FIRST_RELATION_OID = 16400;

const sql = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Types the catalog lists: PostgreSQL's built-ins that the endpoint sends or receives. */
function typeRows(): string[] {
  const rows: string[] = [];
  const pgName: Record<number, string> = {
    [Oid.bool]: 'bool',
    [Oid.bytea]: 'bytea',
    [Oid.name]: 'name',
    [Oid.int8]: 'int8',
    [Oid.int2]: 'int2',
    [Oid.int4]: 'int4',
    [Oid.text]: 'text',
    [Oid.oid]: 'oid',
    [Oid.json]: 'json',
    [Oid.float4]: 'float4',
    [Oid.float8]: 'float8',
    [Oid.varchar]: 'varchar',
    [Oid.bpchar]: 'bpchar',
    [Oid.date]: 'date',
    [Oid.time]: 'time',
    [Oid.timestamp]: 'timestamp',
    [Oid.timestamptz]: 'timestamptz',
    [Oid.interval]: 'interval',
    [Oid.numeric]: 'numeric',
    [Oid.uuid]: 'uuid',
    [Oid.jsonb]: 'jsonb',
    [Oid.unknown]: 'unknown',
  };
  const category: Record<number, string> = {
    [Oid.bool]: 'B',
    [Oid.int8]: 'N',
    [Oid.int2]: 'N',
    [Oid.int4]: 'N',
    [Oid.float4]: 'N',
    [Oid.float8]: 'N',
    [Oid.numeric]: 'N',
    [Oid.oid]: 'N',
    [Oid.date]: 'D',
    [Oid.time]: 'D',
    [Oid.timestamp]: 'D',
    [Oid.timestamptz]: 'D',
    [Oid.interval]: 'T',
    [Oid.text]: 'S',
    [Oid.varchar]: 'S',
    [Oid.bpchar]: 'S',
    [Oid.name]: 'S',
    [Oid.unknown]: 'X',
  };
  const arrays: [number, number][] = [
    [Oid.boolArray, Oid.bool],
    [Oid.byteaArray, Oid.bytea],
    [Oid.int2Array, Oid.int2],
    [Oid.int4Array, Oid.int4],
    [Oid.textArray, Oid.text],
    [Oid.varcharArray, Oid.varchar],
    [Oid.int8Array, Oid.int8],
    [Oid.float4Array, Oid.float4],
    [Oid.float8Array, Oid.float8],
    [Oid.jsonArray, Oid.json],
    [Oid.jsonbArray, Oid.jsonb],
    [Oid.timestampArray, Oid.timestamp],
    [Oid.timestamptzArray, Oid.timestamptz],
    [Oid.dateArray, Oid.date],
    [Oid.numericArray, Oid.numeric],
    [Oid.uuidArray, Oid.uuid],
    [Oid.intervalArray, Oid.interval],
  ];
  const arrayOf = new Map(arrays.map(([a, e]) => [e, a]));
  for (const [oidText, name] of Object.entries(pgName)) {
    const oid = Number(oidText);
    const len = typeSize(oid);
    rows.push(
      `(${oid}, ${sql(name)}, ${NS.pg_catalog}, ${ROLE_OID}, ${len}, ${len > 0 && len <= 8}, 'b', ${sql(category[oid] ?? 'U')}, false, true, ',', 0, 0, ${arrayOf.get(oid) ?? 0}, ${sql(`${name}in`)}, ${sql(`${name}out`)}, ${sql(`${name}recv`)}, ${sql(`${name}send`)}, 'i', 'p', false, 0, -1, 0, ${[Oid.text, Oid.varchar, Oid.bpchar, Oid.name].includes(oid as 25) ? 100 : 0}, NULL, ${sql(TYPE_NAMES[oid] ?? name)})`,
    );
  }
  for (const [arr, elem] of arrays) {
    rows.push(
      `(${arr}, ${sql(`_${pgName[elem]}`)}, ${NS.pg_catalog}, ${ROLE_OID}, -1, false, 'b', 'A', false, true, ',', 0, ${elem}, 0, 'array_in', 'array_out', 'array_recv', 'array_send', 'i', 'x', false, 0, -1, 0, 0, NULL, ${sql(`${TYPE_NAMES[elem] ?? pgName[elem]}[]`)})`,
    );
  }
  return rows;
}

/** Builds the organisation's catalog instance for one session. */
export async function openCatalog(relations: readonly CatalogRelation[], who: CatalogIdentity): Promise<{ instance: DuckDBInstance; conn: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:', {
    enable_external_access: 'false',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '1',
    memory_limit: '128MB',
  });
  const conn = await instance.connect();
  const relRows: string[] = [];
  const attRows: string[] = [];
  const infoTables: string[] = [];
  const infoColumns: string[] = [];
  relations.forEach((rel, r) => {
    const oid = FIRST_RELATION_OID + r;
    relRows.push(
      `(${oid}, ${sql(rel.name)}, ${NS.public}, 0, 0, ${ROLE_OID}, 2, ${oid}, 0, 0, -1, 0, 0, false, false, 'p', 'r', ${rel.columns.length}, 0, false, false, false, false, false, true, 'd', false, 0, NULL, NULL, NULL)`,
    );
    infoTables.push(`(${sql(who.database)}, ${sql(SCHEMA)}, ${sql(rel.name)}, 'BASE TABLE', NULL, NULL, NULL, NULL, NULL, 'NO', 'NO', NULL)`);
    rel.columns.forEach((col, i) => {
      const len = typeSize(col.typeOid);
      const collation = [Oid.text, Oid.varchar].includes(col.typeOid as 25) ? 100 : 0;
      attRows.push(
        `(${oid}, ${sql(col.name)}, ${col.typeOid}, -1, ${len}, ${i + 1}, ${(col.typeOid >= 1000 && col.typeOid < 1300) || col.typeOid === Oid.jsonArray || col.typeOid === Oid.jsonbArray ? 1 : 0}, -1, -1, ${len > 0 && len <= 8}, 'i', 'x', '', false, false, false, '', '', false, true, 0, ${collation}, NULL, NULL, NULL, NULL)`,
      );
      const udt =
        typeRows()
          .find((t) => t.startsWith(`(${col.typeOid},`))
          ?.split(',')[1]
          .trim()
          .replace(/'/g, '') ?? 'text';
      const dataType =
        (col.typeOid >= 1000 && col.typeOid < 1300) || col.typeOid === Oid.jsonArray || col.typeOid === Oid.jsonbArray
          ? 'ARRAY'
          : (TYPE_NAMES[col.typeOid] ?? 'text');
      infoColumns.push(
        `(${sql(who.database)}, ${sql(SCHEMA)}, ${sql(rel.name)}, ${sql(col.name)}, ${i + 1}, NULL, 'YES', ${sql(dataType)}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${sql(who.database)}, 'pg_catalog', ${sql(udt)}, ${i + 1}, 'NO', 'NO', 'NEVER', 'YES')`,
      );
    });
  });
  const settings = who
    .settings()
    .map(
      ([k, v]) =>
        `(${sql(k)}, ${sql(v)}, NULL, 'Client Connection Defaults', '', NULL, 'user', 'string', 'session', NULL, NULL, NULL, ${sql(v)}, ${sql(v)}, NULL, NULL, false)`,
    );
  const settingCase = `CASE lower(n) ${who
    .settings()
    .map(([k, v]) => `WHEN ${sql(k)} THEN ${sql(v)}`)
    .join(' ')} END`;
  const version = `PostgreSQL ${who.serverVersion} (platform sensorData, DuckDB engine) on x86_64-pc-linux-gnu, 64-bit`;
  const statements = [
    'CREATE SCHEMA pgc',
    'CREATE SCHEMA isc',
    // pg_catalog's own types that casts in driver queries name; they behave as their nearest DuckDB type.
    ...['regclass', 'regtype', 'regproc', 'regprocedure', 'regnamespace', 'regrole', 'regoper', 'name', 'aclitem', 'pg_node_tree', 'xid', 'cid', 'tid'].map(
      (t) => `CREATE TYPE pgc.${t} AS VARCHAR`,
    ),
    'CREATE TYPE pgc.int2vector AS SMALLINT[]',
    'CREATE TYPE pgc.oidvector AS INTEGER[]',
    `CREATE TABLE pgc.pg_namespace AS SELECT * FROM (VALUES (${NS.pg_catalog}, 'pg_catalog', ${ROLE_OID}, NULL::VARCHAR[]), (${NS.public}, ${sql(SCHEMA)}, ${ROLE_OID}, NULL), (${NS.information_schema}, 'information_schema', ${ROLE_OID}, NULL)) t(oid, nspname, nspowner, nspacl)`,
    `CREATE TABLE pgc.pg_class (oid INTEGER, relname VARCHAR, relnamespace INTEGER, reltype INTEGER, reloftype INTEGER, relowner INTEGER, relam INTEGER, relfilenode INTEGER, reltablespace INTEGER, relpages INTEGER, reltuples REAL, relallvisible INTEGER, reltoastrelid INTEGER, relhasindex BOOLEAN, relisshared BOOLEAN, relpersistence VARCHAR, relkind VARCHAR, relnatts SMALLINT, relchecks SMALLINT, relhasrules BOOLEAN, relhastriggers BOOLEAN, relhassubclass BOOLEAN, relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispopulated BOOLEAN, relreplident VARCHAR, relispartition BOOLEAN, relrewrite INTEGER, relacl VARCHAR[], reloptions VARCHAR[], relpartbound VARCHAR)`,
    relRows.length ? `INSERT INTO pgc.pg_class VALUES ${relRows.join(', ')}` : '',
    `CREATE TABLE pgc.pg_attribute (attrelid INTEGER, attname VARCHAR, atttypid INTEGER, attstattarget INTEGER, attlen SMALLINT, attnum SMALLINT, attndims INTEGER, attcacheoff INTEGER, atttypmod INTEGER, attbyval BOOLEAN, attalign VARCHAR, attstorage VARCHAR, attcompression VARCHAR, attnotnull BOOLEAN, atthasdef BOOLEAN, atthasmissing BOOLEAN, attidentity VARCHAR, attgenerated VARCHAR, attisdropped BOOLEAN, attislocal BOOLEAN, attinhcount INTEGER, attcollation INTEGER, attacl VARCHAR[], attoptions VARCHAR[], attfdwoptions VARCHAR[], attmissingval VARCHAR)`,
    attRows.length ? `INSERT INTO pgc.pg_attribute VALUES ${attRows.join(', ')}` : '',
    `CREATE TABLE pgc.pg_type (oid INTEGER, typname VARCHAR, typnamespace INTEGER, typowner INTEGER, typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, typispreferred BOOLEAN, typisdefined BOOLEAN, typdelim VARCHAR, typrelid INTEGER, typelem INTEGER, typarray INTEGER, typinput VARCHAR, typoutput VARCHAR, typreceive VARCHAR, typsend VARCHAR, typalign VARCHAR, typstorage VARCHAR, typnotnull BOOLEAN, typbasetype INTEGER, typtypmod INTEGER, typndims INTEGER, typcollation INTEGER, typdefault VARCHAR, display VARCHAR)`,
    `INSERT INTO pgc.pg_type VALUES ${typeRows().join(', ')}`,
    `CREATE TABLE pgc.pg_database AS SELECT * FROM (VALUES (${DATABASE_OID}, ${sql(who.database)}, ${ROLE_OID}, 6, 'c', false, true, -1, 0, 0, 1663, 'C.UTF-8', 'C.UTF-8', NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR[])) t(oid, datname, datdba, encoding, datlocprovider, datistemplate, datallowconn, datconnlimit, datfrozenxid, datminmxid, dattablespace, datcollate, datctype, daticulocale, datcollversion, datacl)`,
    `CREATE TABLE pgc.pg_roles AS SELECT * FROM (VALUES (${ROLE_OID}, ${sql(who.username)}, false, true, false, false, true, false, -1, '********', NULL::TIMESTAMPTZ, false, NULL::VARCHAR[])) t(oid, rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolconnlimit, rolpassword, rolvaliduntil, rolbypassrls, rolconfig)`,
    `CREATE TABLE pgc.pg_authid AS SELECT oid, rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin, rolreplication, rolbypassrls, rolconnlimit, NULL::VARCHAR AS rolpassword, rolvaliduntil FROM pgc.pg_roles`,
    `CREATE TABLE pgc.pg_user AS SELECT rolname AS usename, oid AS usesysid, false AS usecreatedb, false AS usesuper, false AS userepl, false AS usebypassrls, '********' AS passwd, NULL::TIMESTAMPTZ AS valuntil, NULL::VARCHAR[] AS useconfig FROM pgc.pg_roles`,
    `CREATE TABLE pgc.pg_am AS SELECT * FROM (VALUES (2, 'heap', 'heap_tableam_handler', 't'), (403, 'btree', 'bthandler', 'i')) t(oid, amname, amhandler, amtype)`,
    `CREATE TABLE pgc.pg_tablespace AS SELECT * FROM (VALUES (1663, 'pg_default', ${ROLE_OID}, NULL::VARCHAR[], NULL::VARCHAR[])) t(oid, spcname, spcowner, spcacl, spcoptions)`,
    'CREATE TABLE pgc.pg_description (objoid INTEGER, classoid INTEGER, objsubid INTEGER, description VARCHAR)',
    'CREATE TABLE pgc.pg_shdescription (objoid INTEGER, classoid INTEGER, description VARCHAR)',
    'CREATE TABLE pgc.pg_index (indexrelid INTEGER, indrelid INTEGER, indnatts SMALLINT, indnkeyatts SMALLINT, indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, indisprimary BOOLEAN, indisexclusion BOOLEAN, indimmediate BOOLEAN, indisclustered BOOLEAN, indisvalid BOOLEAN, indcheckxmin BOOLEAN, indisready BOOLEAN, indislive BOOLEAN, indisreplident BOOLEAN, indkey SMALLINT[], indcollation INTEGER[], indclass INTEGER[], indoption SMALLINT[], indexprs VARCHAR, indpred VARCHAR)',
    'CREATE TABLE pgc.pg_constraint (oid INTEGER, conname VARCHAR, connamespace INTEGER, contype VARCHAR, condeferrable BOOLEAN, condeferred BOOLEAN, convalidated BOOLEAN, conrelid INTEGER, contypid INTEGER, conindid INTEGER, conparentid INTEGER, confrelid INTEGER, confupdtype VARCHAR, confdeltype VARCHAR, confmatchtype VARCHAR, conislocal BOOLEAN, coninhcount INTEGER, connoinherit BOOLEAN, conkey SMALLINT[], confkey SMALLINT[], conpfeqop INTEGER[], conppeqop INTEGER[], conffeqop INTEGER[], conexclop INTEGER[], conbin VARCHAR)',
    'CREATE TABLE pgc.pg_attrdef (oid INTEGER, adrelid INTEGER, adnum SMALLINT, adbin VARCHAR)',
    'CREATE TABLE pgc.pg_inherits (inhrelid INTEGER, inhparent INTEGER, inhseqno INTEGER, inhdetachpending BOOLEAN)',
    `CREATE TABLE pgc.pg_settings (name VARCHAR, setting VARCHAR, unit VARCHAR, category VARCHAR, short_desc VARCHAR, extra_desc VARCHAR, context VARCHAR, vartype VARCHAR, source VARCHAR, min_val VARCHAR, max_val VARCHAR, enumvals VARCHAR[], boot_val VARCHAR, reset_val VARCHAR, sourcefile VARCHAR, sourceline INTEGER, pending_restart BOOLEAN)`,
    settings.length ? `INSERT INTO pgc.pg_settings VALUES ${settings.join(', ')}` : '',
    'CREATE TABLE pgc.pg_proc (oid INTEGER, proname VARCHAR, pronamespace INTEGER, proowner INTEGER, prolang INTEGER, procost REAL, prorows REAL, provariadic INTEGER, prosupport VARCHAR, prokind VARCHAR, prosecdef BOOLEAN, proleakproof BOOLEAN, proisstrict BOOLEAN, proretset BOOLEAN, provolatile VARCHAR, proparallel VARCHAR, pronargs SMALLINT, pronargdefaults SMALLINT, prorettype INTEGER, proargtypes INTEGER[], proallargtypes INTEGER[], proargdefaults VARCHAR, proargmodes VARCHAR[], proargnames VARCHAR[], prosrc VARCHAR, probin VARCHAR, proconfig VARCHAR[], proacl VARCHAR[])',
    'CREATE TABLE pgc.pg_extension (oid INTEGER, extname VARCHAR, extowner INTEGER, extnamespace INTEGER, extrelocatable BOOLEAN, extversion VARCHAR, extconfig INTEGER[], extcondition VARCHAR[])',
    `CREATE TABLE pgc.pg_collation AS SELECT * FROM (VALUES (100, 'default', ${NS.pg_catalog}, ${ROLE_OID}, 'd', true, -1, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR)) t(oid, collname, collnamespace, collowner, collprovider, collisdeterministic, collencoding, collcollate, collctype, colliculocale, collversion)`,
    'CREATE TABLE pgc.pg_policy (oid INTEGER, polname VARCHAR, polrelid INTEGER, polcmd VARCHAR, polpermissive BOOLEAN, polroles INTEGER[], polqual VARCHAR, polwithcheck VARCHAR)',
    'CREATE TABLE pgc.pg_rewrite (oid INTEGER, rulename VARCHAR, ev_class INTEGER, ev_type VARCHAR, ev_enabled VARCHAR, is_instead BOOLEAN)',
    'CREATE TABLE pgc.pg_trigger (oid INTEGER, tgrelid INTEGER, tgparentid INTEGER, tgname VARCHAR, tgfoid INTEGER, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, tgconstrrelid INTEGER, tgconstrindid INTEGER, tgconstraint INTEGER)',
    'CREATE TABLE pgc.pg_statistic_ext (oid INTEGER, stxrelid INTEGER, stxname VARCHAR, stxnamespace INTEGER, stxowner INTEGER, stxstattarget INTEGER, stxkeys SMALLINT[], stxkind VARCHAR[], stxexprs VARCHAR)',
    'CREATE TABLE pgc.pg_publication (oid INTEGER, pubname VARCHAR, pubowner INTEGER, puballtables BOOLEAN, pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN)',
    'CREATE TABLE pgc.pg_publication_rel (oid INTEGER, prpubid INTEGER, prrelid INTEGER, prqual VARCHAR, prattrs SMALLINT[])',
    'CREATE TABLE pgc.pg_publication_namespace (oid INTEGER, pnpubid INTEGER, pnnspid INTEGER)',
    'CREATE TABLE pgc.pg_enum (oid INTEGER, enumtypid INTEGER, enumsortorder REAL, enumlabel VARCHAR)',
    'CREATE TABLE pgc.pg_range (rngtypid INTEGER, rngsubtype INTEGER, rngmultitypid INTEGER)',
    'CREATE TABLE pgc.pg_foreign_table (ftrelid INTEGER, ftserver INTEGER, ftoptions VARCHAR[])',
    'CREATE TABLE pgc.pg_foreign_server (oid INTEGER, srvname VARCHAR)',
    'CREATE TABLE pgc.pg_partitioned_table (partrelid INTEGER, partstrat VARCHAR, partnatts SMALLINT, partdefid INTEGER)',
    'CREATE TABLE pgc.pg_sequence (seqrelid INTEGER, seqtypid INTEGER)',
    'CREATE TABLE pgc.pg_views (schemaname VARCHAR, viewname VARCHAR, viewowner VARCHAR, definition VARCHAR)',
    'CREATE TABLE pgc.pg_matviews (schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, tablespace VARCHAR, hasindexes BOOLEAN, ispopulated BOOLEAN, definition VARCHAR)',
    'CREATE TABLE pgc.pg_indexes (schemaname VARCHAR, tablename VARCHAR, indexname VARCHAR, tablespace VARCHAR, indexdef VARCHAR)',
    'CREATE TABLE pgc.pg_depend (classid INTEGER, objid INTEGER, objsubid INTEGER, refclassid INTEGER, refobjid INTEGER, refobjsubid INTEGER, deptype VARCHAR)',
    'CREATE TABLE pgc.pg_event_trigger (oid INTEGER, evtname VARCHAR, evtevent VARCHAR, evtowner INTEGER, evtfoid INTEGER, evtenabled VARCHAR, evttags VARCHAR[])',
    `CREATE TABLE pgc.pg_language AS SELECT * FROM (VALUES (12, 'internal', ${ROLE_OID}, false, false), (13, 'c', ${ROLE_OID}, false, false), (14, 'sql', ${ROLE_OID}, false, true)) t(oid, lanname, lanowner, lanispl, lanpltrusted)`,
    'CREATE TABLE pgc.pg_operator (oid INTEGER, oprname VARCHAR, oprnamespace INTEGER, oprleft INTEGER, oprright INTEGER, oprresult INTEGER)',
    'CREATE TABLE pgc.pg_opclass (oid INTEGER, opcmethod INTEGER, opcname VARCHAR, opcnamespace INTEGER)',
    'CREATE TABLE pgc.pg_aggregate (aggfnoid INTEGER, aggkind VARCHAR)',
    'CREATE TABLE pgc.pg_cast (oid INTEGER, castsource INTEGER, casttarget INTEGER, castfunc INTEGER, castcontext VARCHAR, castmethod VARCHAR)',
    'CREATE TABLE pgc.pg_conversion (oid INTEGER, conname VARCHAR)',
    'CREATE TABLE pgc.pg_locks (locktype VARCHAR, database INTEGER, relation INTEGER, pid INTEGER, mode VARCHAR, granted BOOLEAN)',
    `CREATE TABLE pgc.pg_tables AS SELECT ${sql(SCHEMA)} AS schemaname, relname AS tablename, ${sql(who.username)} AS tableowner, NULL::VARCHAR AS tablespace, false AS hasindexes, false AS hasrules, false AS hastriggers, false AS rowsecurity FROM pgc.pg_class`,
    `CREATE TABLE pgc.pg_stat_user_tables AS SELECT oid AS relid, ${sql(SCHEMA)} AS schemaname, relname, NULL::BIGINT AS n_live_tup FROM pgc.pg_class`,
    `CREATE TABLE isc.tables (table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, table_type VARCHAR, self_referencing_column_name VARCHAR, reference_generation VARCHAR, user_defined_type_catalog VARCHAR, user_defined_type_schema VARCHAR, user_defined_type_name VARCHAR, is_insertable_into VARCHAR, is_typed VARCHAR, commit_action VARCHAR)`,
    infoTables.length ? `INSERT INTO isc.tables VALUES ${infoTables.join(', ')}` : '',
    `CREATE TABLE isc.columns (table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, column_name VARCHAR, ordinal_position INTEGER, column_default VARCHAR, is_nullable VARCHAR, data_type VARCHAR, character_maximum_length INTEGER, character_octet_length INTEGER, numeric_precision INTEGER, numeric_precision_radix INTEGER, numeric_scale INTEGER, datetime_precision INTEGER, interval_type VARCHAR, udt_catalog VARCHAR, udt_schema VARCHAR, udt_name VARCHAR, dtd_identifier INTEGER, is_self_referencing VARCHAR, is_identity VARCHAR, is_generated VARCHAR, is_updatable VARCHAR)`,
    infoColumns.length ? `INSERT INTO isc.columns VALUES ${infoColumns.join(', ')}` : '',
    `CREATE TABLE isc.schemata AS SELECT * FROM (VALUES (${sql(who.database)}, ${sql(SCHEMA)}, ${sql(who.username)}), (${sql(who.database)}, 'pg_catalog', ${sql(who.username)}), (${sql(who.database)}, 'information_schema', ${sql(who.username)})) t(catalog_name, schema_name, schema_owner)`,
    'CREATE TABLE isc.views (table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, view_definition VARCHAR)',
    'CREATE TABLE isc.key_column_usage (constraint_catalog VARCHAR, constraint_schema VARCHAR, constraint_name VARCHAR, table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, column_name VARCHAR, ordinal_position INTEGER, position_in_unique_constraint INTEGER)',
    'CREATE TABLE isc.table_constraints (constraint_catalog VARCHAR, constraint_schema VARCHAR, constraint_name VARCHAR, table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, constraint_type VARCHAR, is_deferrable VARCHAR, initially_deferred VARCHAR)',
    'CREATE TABLE isc.referential_constraints (constraint_catalog VARCHAR, constraint_schema VARCHAR, constraint_name VARCHAR, unique_constraint_catalog VARCHAR, unique_constraint_schema VARCHAR, unique_constraint_name VARCHAR, match_option VARCHAR, update_rule VARCHAR, delete_rule VARCHAR)',
    'CREATE TABLE isc.routines (specific_catalog VARCHAR, specific_schema VARCHAR, specific_name VARCHAR, routine_catalog VARCHAR, routine_schema VARCHAR, routine_name VARCHAR, routine_type VARCHAR, data_type VARCHAR)',
    `CREATE TABLE isc.character_sets AS SELECT NULL::VARCHAR AS character_set_catalog, NULL::VARCHAR AS character_set_schema, 'UTF8' AS character_set_name, 'UCS' AS character_repertoire, 'UTF8' AS form_of_use, ${sql(who.database)} AS default_collate_catalog, 'pg_catalog' AS default_collate_schema, 'C.UTF-8' AS default_collate_name`,
    // The functions drivers call, answered from this catalog.
    `CREATE MACRO pgc.pg_get_userbyid(r) AS CASE WHEN r = ${ROLE_OID} THEN ${sql(who.username)} ELSE 'unknown (OID=' || r || ')' END`,
    'CREATE MACRO pgc.pg_table_is_visible(o) AS o IN (SELECT oid FROM pgc.pg_class)',
    'CREATE MACRO pgc.pg_type_is_visible(o) AS true',
    'CREATE MACRO pgc.pg_function_is_visible(o) AS true',
    `CREATE MACRO pgc.format_type(t, m) AS (SELECT coalesce(max(display), '???') FROM pgc.pg_type WHERE oid = t)`,
    'CREATE MACRO pgc.obj_description(o) AS NULL::VARCHAR, (o, c) AS NULL::VARCHAR',
    'CREATE MACRO pgc.col_description(o, n) AS NULL::VARCHAR',
    'CREATE MACRO pgc.shobj_description(o, c) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_expr(e, r) AS NULL::VARCHAR, (e, r, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_indexdef(o) AS NULL::VARCHAR, (o, c, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_constraintdef(o) AS NULL::VARCHAR, (o, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_viewdef(o) AS NULL::VARCHAR, (o, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_ruledef(o) AS NULL::VARCHAR, (o, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_triggerdef(o) AS NULL::VARCHAR, (o, p) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_partkeydef(o) AS NULL::VARCHAR',
    // pg_proc is empty (an organisation defines no functions), so psql's \df and pgcli's function list
    // never call these with a row; they exist so those queries bind.
    'CREATE MACRO pgc.pg_get_function_arguments(o) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_function_sqlbody(o) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_serial_sequence(t, c) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_function_identity_arguments(o) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_function_result(o) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_get_statisticsobjdef_columns(o) AS NULL::VARCHAR',
    'CREATE MACRO pgc.pg_relation_is_publishable(o) AS false',
    "CREATE MACRO pgc.pg_encoding_to_char(e) AS CASE WHEN e = 6 THEN 'UTF8' ELSE 'SQL_ASCII' END",
    "CREATE MACRO pgc.pg_char_to_encoding(e) AS CASE WHEN upper(e) IN ('UTF8', 'UTF-8') THEN 6 ELSE 0 END",
    "CREATE MACRO pgc.getdatabaseencoding() AS 'UTF8'",
    'CREATE MACRO pgc.has_table_privilege(a, b) AS true, (a, b, c) AS true',
    'CREATE MACRO pgc.has_schema_privilege(a, b) AS true, (a, b, c) AS true',
    'CREATE MACRO pgc.has_database_privilege(a, b) AS true, (a, b, c) AS true',
    'CREATE MACRO pgc.has_column_privilege(a, b, c) AS true, (a, b, c, d) AS true',
    'CREATE MACRO pgc.has_any_column_privilege(a, b) AS true, (a, b, c) AS true',
    `CREATE MACRO pgc.current_schema() AS ${sql(SCHEMA)}`,
    `CREATE MACRO pgc.current_schemas(implicit) AS CASE WHEN implicit THEN ['pg_catalog', ${sql(SCHEMA)}] ELSE [${sql(SCHEMA)}] END`,
    `CREATE MACRO pgc.current_database() AS ${sql(who.database)}`,
    `CREATE MACRO pgc.version() AS ${sql(version)}`,
    `CREATE MACRO pgc.pg_backend_pid() AS ${who.backendPid}`,
    'CREATE MACRO pgc.pg_is_in_recovery() AS false',
    'CREATE MACRO pgc.pg_is_other_temp_schema(o) AS false',
    'CREATE MACRO pgc.pg_my_temp_schema() AS 0',
    "CREATE MACRO pgc.pg_postmaster_start_time() AS TIMESTAMPTZ '2000-01-01 00:00:00+00'",
    'CREATE MACRO pgc.txid_current() AS 1::BIGINT',
    'CREATE MACRO pgc.pg_relation_size(o) AS NULL::BIGINT, (o, f) AS NULL::BIGINT',
    'CREATE MACRO pgc.pg_total_relation_size(o) AS NULL::BIGINT',
    "CREATE MACRO pgc.pg_size_pretty(b) AS CASE WHEN b IS NULL THEN NULL ELSE b::VARCHAR || ' bytes' END",
    "CREATE MACRO pgc.pg_tablespace_location(o) AS ''",
    'CREATE MACRO pgc.inet_server_addr() AS NULL::VARCHAR',
    'CREATE MACRO pgc.inet_server_port() AS NULL::INTEGER',
    'CREATE MACRO pgc.array_upper(a, d) AS CASE WHEN d = 1 AND len(a) > 0 THEN len(a) END',
    'CREATE MACRO pgc.array_lower(a, d) AS CASE WHEN d = 1 AND len(a) > 0 THEN 1 END',
    `CREATE MACRO pgc.quote_ident(s) AS CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*') THEN s ELSE '"' || replace(s, '"', '""') || '"' END`,
    `CREATE MACRO pgc.to_regclass(s) AS (SELECT max(oid) FROM pgc.pg_class WHERE relname = s OR ${sql(`${SCHEMA}.`)} || relname = s)`,
    // A plain CASE, not a subquery: Grafana calls it inside generate_series(), where DuckDB takes no subqueries.
    `CREATE MACRO pgc.current_setting(n) AS ${settingCase}, (n, m) AS ${settingCase}`,
    // A set-returning function in PostgreSQL; unnest in the select list gives the same rows here.
    `CREATE MACRO isc._pg_expandarray(a) AS unnest(list_transform(range(1, len(a) + 1), i -> {'x': a[i], 'n': i}))`,
    "SET search_path = 'pgc,isc,main'",
    'SET lock_configuration = true',
  ];
  for (const s of statements) if (s) await conn.run(s);
  return { instance, conn };
}
