// Turns a data Filter plus the caller's scope into a SQL WHERE clause over tabular_data or binary_data.
// Fields combine with AND; the tags of a tags filter and the bbox labels match with OR (FACTS.md).
// Every list of the filter is bounded (list-limit.ts) and passed as one list parameter, so neither the
// SQL text nor the parameter list grows with it. The parameters are TabularStore values (a Date for a
// time, a string[] for a list), so one clause serves both backends; the few tests DuckDB and PostgreSQL
// spell differently are chosen by the store's dialect (cloud/store/README.md, dialect table).
import { timestampTZValue, type DuckDBValue } from '@duckdb/node-api';
import { invalidArgument, permissionDenied } from '../../core/serving/status-error.js';
import { TagsFilterType, type Filter } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { internalTag } from '../store/schema.js';
import type { Dialect, SqlValue } from '../store/tabular.js';
import { checkListSize } from './list-limit.js';

export type DataKind = 'tabular' | 'binary';

export interface Where {
  sql: string;
  params: (DuckDBValue | SqlValue)[];
}

/** A WHERE clause whose parameters every TabularStore takes (cloud/store/tabular.ts). */
export interface NeutralWhere extends Where {
  params: SqlValue[];
}

export const micros = (date: Date): bigint => BigInt(date.getTime()) * 1000n;
export const timestampParam = (date: Date): DuckDBValue => timestampTZValue(micros(date));

/**
 * `column IN (ids)` with a single list parameter. DuckDB binds one list far faster than one
 * placeholder per id (10000 ids: ~6x), and pages of binary data can hold that many. The same SQL
 * serves PostgreSQL, which takes the list as one array parameter.
 */
export function inList(column: string, ids: readonly string[]): NeutralWhere {
  if (ids.length === 0) return { sql: 'false', params: [] };
  return { sql: `${column} IN (SELECT unnest(CAST(? AS VARCHAR[])))`, params: [[...ids]] };
}

/** Restricts rows to what the key may see: its organization, and its location or machine. */
export function scopeWhere(principal: KeyPrincipal, alias = ''): NeutralWhere {
  const a = alias ? `${alias}.` : '';
  const clauses = [`${a}organization_id = ?`];
  const params: SqlValue[] = [principal.organizationId];
  if (principal.scope.type === 'location') {
    clauses.push(`${a}location_id = ?`);
    params.push(principal.scope.id);
  } else if (principal.scope.type === 'machine') {
    clauses.push(`${a}robot_id = ?`);
    params.push(principal.scope.id);
  }
  return { sql: clauses.join(' AND '), params };
}

/** 4714-11-24 BC, PostgreSQL's first TIMESTAMPTZ, in milliseconds since the epoch. */
const pgFirstMs = -210_866_803_200_000;

/**
 * A Date as a PostgreSQL TIMESTAMPTZ parameter: one before PostgreSQL's range (a Date reaches back to
 * 271821 BC) is '-infinity', which orders the same against every stored row, where the Date itself is
 * refused as out of range. (A Date's other end, 275760 AD, is inside PostgreSQL's range.)
 */
function pgTime(date: Date): SqlValue {
  return date.getTime() < pgFirstMs ? '-infinity' : date;
}

/** A time parameter compared with a TIMESTAMPTZ column, in the dialect's terms (see pgTime). */
export function timeValue(dialect: Dialect | undefined, date: Date): SqlValue {
  return dialect === 'postgres' ? pgTime(date) : date;
}

export interface FilterOptions {
  includeInternal: boolean;
  /** The SQL of the store the clause runs on; DuckDB's by default. */
  dialect?: Dialect;
}

/**
 * The tests of a filter that DuckDB and PostgreSQL spell differently. Each has one `?` for a string[]
 * (or, for datasetHas, a string). DuckDB's are the statements it ran before issue 33, unchanged.
 */
interface ListTests {
  /** column's value is one of the list (column is a scalar text column). */
  oneOf(column: string): string;
  /** tags holds one of the list's elements. */
  tagsAny: string;
  /** tags holds an element other than the internal marker (NULL tags: NULL). */
  tagged: string;
  /** tags holds no element but the internal marker (NULL tags: NULL). */
  untagged: string;
  /** dataset_ids holds the id. */
  datasetHas: string;
}

const listTests: Record<Dialect, ListTests> = {
  duckdb: {
    oneOf: (column) => `list_contains(CAST(? AS VARCHAR[]), ${column})`,
    tagsAny: 'list_has_any(tags, CAST(? AS VARCHAR[]))',
    tagged: `len(list_filter(tags, t -> t <> '${internalTag}')) > 0`,
    untagged: `len(list_filter(tags, t -> t <> '${internalTag}')) = 0`,
    datasetHas: 'list_contains(dataset_ids, ?)',
  },
  postgres: {
    // = ANY of a text[] keeps the column's btree index usable; @> lets a GIN index on dataset_ids serve.
    oneOf: (column) => `${column} = ANY(CAST(? AS text[]))`,
    tagsAny: 'tags && CAST(? AS VARCHAR[])',
    tagged: `cardinality(array_remove(tags, CAST('${internalTag}' AS VARCHAR))) > 0`,
    untagged: `cardinality(array_remove(tags, CAST('${internalTag}' AS VARCHAR))) = 0`,
    datasetHas: 'dataset_ids @> ARRAY[CAST(? AS VARCHAR)]',
  },
};

/**
 * The WHERE clause (without the keyword) for rows of `kind` that match `filter` inside the caller's
 * scope. A filter naming another organization is PERMISSION_DENIED rather than silently empty.
 */
export function filterWhere(filter: Filter | undefined, kind: DataKind, principal: KeyPrincipal, options: FilterOptions): NeutralWhere {
  const sql = listTests[options.dialect ?? 'duckdb'];
  const scope = scopeWhere(principal);
  const clauses = [scope.sql];
  const params = [...scope.params];
  const add = (sql: string, ...values: SqlValue[]) => {
    clauses.push(sql);
    params.push(...values);
  };
  if (!options.includeInternal) add('NOT internal');
  if (!filter) return { sql: clauses.join(' AND '), params };

  checkListSize('filter.organization_ids', filter.organizationIds);
  checkListSize('filter.location_ids', filter.locationIds);
  checkListSize('filter.mime_type', filter.mimeType);
  checkListSize('filter.bbox_labels', filter.bboxLabels);
  if (filter.tagsFilter) checkListSize('filter.tags_filter.tags', filter.tagsFilter.tags);
  for (const org of filter.organizationIds) {
    if (org !== principal.organizationId) {
      throw permissionDenied(`filter.organization_ids names organization ${org}, which API key ${principal.keyId} does not belong to`);
    }
  }
  const equal: [string, string][] = [
    ['component_name', filter.componentName],
    ['method_name', filter.method],
    ['robot_name', filter.robotName],
    ['robot_id', filter.robotId],
    ['part_name', filter.partName],
    ['part_id', filter.partId],
  ];
  for (const [column, value] of equal) if (value) add(`${column} = ?`, value);
  if (filter.componentType) {
    const [sql, ...values] = componentTypeMatch(filter.componentType);
    add(sql, ...values);
  }
  if (filter.locationIds.length > 0) add(sql.oneOf('location_id'), [...filter.locationIds]);

  const { start, end } = filter.interval ?? {};
  if (start && end && start.getTime() > end.getTime()) throw invalidArgument('filter.interval.start must not be after filter.interval.end');
  // A Date binds as a TIMESTAMPTZ on both backends (on DuckDB the same value timestampParam makes).
  if (start) add('time_requested >= ?', timeValue(options.dialect, start));
  if (end) add('time_requested < ?', timeValue(options.dialect, end));

  const tags = filter.tagsFilter;
  if (tags) {
    for (const [i, tag] of tags.tags.entries()) if (!tag) throw invalidArgument(`filter.tags_filter.tags[${i}] must not be empty`);
    switch (tags.type) {
      case TagsFilterType.TAGS_FILTER_TYPE_UNSPECIFIED:
      case TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR:
        if (tags.tags.length > 0) add(sql.tagsAny, [...tags.tags]);
        else if (tags.type === TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR) {
          throw invalidArgument('filter.tags_filter.tags must list at least one tag for TAGS_FILTER_TYPE_MATCH_BY_OR');
        }
        break;
      case TagsFilterType.TAGS_FILTER_TYPE_TAGGED:
        // The internal marker tag is not a user tag.
        add(sql.tagged);
        break;
      case TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED:
        add(sql.untagged);
        break;
      default:
        throw invalidArgument(`filter.tags_filter.type ${tags.type} is not a TagsFilterType`);
    }
  }

  if (kind === 'tabular') {
    // These describe binary data only; accepting them would silently match nothing or everything.
    if (filter.mimeType.length > 0) throw invalidArgument('filter.mime_type applies to binary data only, not tabular data');
    if (filter.bboxLabels.length > 0) throw invalidArgument('filter.bbox_labels applies to binary data only, not tabular data');
    if (filter.datasetId) throw invalidArgument('filter.dataset_id applies to binary data only, not tabular data');
  } else {
    if (filter.mimeType.length > 0) add(sql.oneOf('mime_type'), [...filter.mimeType]);
    if (filter.bboxLabels.length > 0) {
      add(`binary_data_id IN (SELECT binary_data_id FROM bounding_boxes WHERE ${sql.oneOf('label')})`, [...filter.bboxLabels]);
    }
    if (filter.datasetId) add(sql.datasetHas, filter.datasetId);
  }
  return { sql: clauses.join(' AND '), params };
}

/**
 * component_type as people write it: the short form (`sensor`) and the API form (`core:component:sensor`)
 * each match rows stored in either form (uploaders store one or the other), so a filter that looks right
 * finds the rows. Any other text matches itself exactly.
 */
export function componentTypeMatch(value: string): [string, ...string[]] {
  const parts = value.split(':');
  if (parts.length === 1) return ["(component_type = ? OR component_type LIKE ? ESCAPE '\\')", value, `%:${value.replace(/[\\%_]/g, (c) => `\\${c}`)}`];
  if (parts.length === 3 && parts.every((p) => p !== '')) return ['(component_type = ? OR component_type = ?)', value, parts[2]];
  return ['component_type = ?', value];
}
