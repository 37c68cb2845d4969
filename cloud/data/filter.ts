// Turns a data Filter plus the caller's scope into a SQL WHERE clause over tabular_data or binary_data.
// Fields combine with AND; the tags of a tags filter and the bbox labels match with OR (FACTS.md).
// Every list of the filter is bounded (list-limit.ts) and passed as one list parameter, so neither the
// SQL text nor the parameter list grows with it.
import { listValue, timestampTZValue, type DuckDBValue } from '@duckdb/node-api';
import { invalidArgument, permissionDenied } from '../../core/serving/status-error.js';
import { TagsFilterType, type Filter } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { internalTag } from '../store/schema.js';
import type { SqlValue } from '../store/tabular.js';
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

/** A list of strings as one parameter: no placeholder (or argument) per item, however many there are. */
const stringList = (items: readonly string[]): DuckDBValue => listValue([...items]);

/** Restricts rows to what the key may see: its organization, and its location or machine. */
export function scopeWhere(principal: KeyPrincipal, alias = ''): Where {
  const a = alias ? `${alias}.` : '';
  const clauses = [`${a}organization_id = ?`];
  const params: DuckDBValue[] = [principal.organizationId];
  if (principal.scope.type === 'location') {
    clauses.push(`${a}location_id = ?`);
    params.push(principal.scope.id);
  } else if (principal.scope.type === 'machine') {
    clauses.push(`${a}robot_id = ?`);
    params.push(principal.scope.id);
  }
  return { sql: clauses.join(' AND '), params };
}

export interface FilterOptions {
  includeInternal: boolean;
}

/**
 * The WHERE clause (without the keyword) for rows of `kind` that match `filter` inside the caller's
 * scope. A filter naming another organization is PERMISSION_DENIED rather than silently empty.
 */
export function filterWhere(filter: Filter | undefined, kind: DataKind, principal: KeyPrincipal, options: FilterOptions): Where {
  const scope = scopeWhere(principal);
  const clauses = [scope.sql];
  const params = [...scope.params];
  const add = (sql: string, ...values: DuckDBValue[]) => {
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
  if (filter.locationIds.length > 0) add('list_contains(CAST(? AS VARCHAR[]), location_id)', stringList(filter.locationIds));

  const { start, end } = filter.interval ?? {};
  if (start && end && start.getTime() > end.getTime()) throw invalidArgument('filter.interval.start must not be after filter.interval.end');
  if (start) add('time_requested >= ?', timestampParam(start));
  if (end) add('time_requested < ?', timestampParam(end));

  const tags = filter.tagsFilter;
  if (tags) {
    for (const [i, tag] of tags.tags.entries()) if (!tag) throw invalidArgument(`filter.tags_filter.tags[${i}] must not be empty`);
    switch (tags.type) {
      case TagsFilterType.TAGS_FILTER_TYPE_UNSPECIFIED:
      case TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR:
        if (tags.tags.length > 0) add('list_has_any(tags, CAST(? AS VARCHAR[]))', stringList(tags.tags));
        else if (tags.type === TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR) {
          throw invalidArgument('filter.tags_filter.tags must list at least one tag for TAGS_FILTER_TYPE_MATCH_BY_OR');
        }
        break;
      case TagsFilterType.TAGS_FILTER_TYPE_TAGGED:
        // The internal marker tag is not a user tag.
        add(`len(list_filter(tags, t -> t <> '${internalTag}')) > 0`);
        break;
      case TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED:
        add(`len(list_filter(tags, t -> t <> '${internalTag}')) = 0`);
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
    if (filter.mimeType.length > 0) add('list_contains(CAST(? AS VARCHAR[]), mime_type)', stringList(filter.mimeType));
    if (filter.bboxLabels.length > 0) {
      add('binary_data_id IN (SELECT binary_data_id FROM bounding_boxes WHERE list_contains(CAST(? AS VARCHAR[]), label))', stringList(filter.bboxLabels));
    }
    if (filter.datasetId) add('list_contains(dataset_ids, ?)', filter.datasetId);
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
