// Tabular reads and deletes: TabularDataByFilter, ExportTabularData, GetLatestTabularData,
// DeleteTabularData. The caller's scope is always part of the WHERE clause. Each runs on either
// TabularStore backend (issue 33): the statements are the same but for a page's reader (DuckDB's
// time windows in page-query.ts, PostgreSQL's index walk in pg-page.ts) and the row's time in
// microseconds (timeMicrosColumn); times and lists go in as Date and string[] parameters.
import { invalidArgument } from '../../core/serving/status-error.js';
import {
  Order,
  type CaptureMetadata,
  ExportTabularDataRequest,
  ExportTabularDataResponse,
  GetLatestTabularDataRequest,
  GetLatestTabularDataResponse,
  TabularData,
  TabularDataByFilterRequest,
  TabularDataByFilterResponse,
} from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import type { Row } from '../store/store.js';
import { Store } from '../store/store.js';
import type { Dialect, SqlValue, TabularRow, TabularStore } from '../store/tabular.js';
import { filterWhere, scopeWhere, type NeutralWhere } from './filter.js';
import { readPage } from './page-query.js';
import { readPagePg, timeMicrosColumn } from './pg-page.js';
import { captureColumns, captureMetadataOf, cursorOf, pageOf, parseJson, type Page } from './rows.js';

const pointColumnsOf = (dialect: Dialect) => `seq, ${timeMicrosColumn(dialect)}, ${captureColumns}, time_requested, time_received, data, size_bytes`;
const pointColumns: Record<Dialect, string> = { duckdb: pointColumnsOf('duckdb'), postgres: pointColumnsOf('postgres') };

const asRow = (row: TabularRow) => row as Row;

/** One page of tabular_data: DuckDB's time-window reader, or PostgreSQL's index walk. */
function readPointPage(store: TabularStore, where: NeutralWhere, page: Page): Promise<TabularRow[]> {
  return store instanceof Store
    ? readPage(store, 'tabular_data', pointColumns.duckdb, where, page)
    : readPagePg(store, 'tabular_data', pointColumns[store.dialect], where, page);
}

export async function tabularDataByFilter(
  store: TabularStore,
  principal: KeyPrincipal,
  request: TabularDataByFilterRequest,
): Promise<TabularDataByFilterResponse> {
  const where = filterWhere(request.dataRequest?.filter, 'tabular', principal, { includeInternal: request.includeInternalData, dialect: store.dialect });
  if (request.countOnly) {
    const rows = await store.query(`SELECT count(*) AS n, coalesce(sum(size_bytes), 0) AS bytes FROM tabular_data WHERE ${where.sql}`, where.params);
    return { metadata: [], data: [], count: Number(rows[0].n), last: '', totalSizeBytes: Number(rows[0].bytes) };
  }
  const page = pageOf(request.dataRequest);
  const rows = (await readPointPage(store, where, page)).map(asRow);
  const metadata: CaptureMetadata[] = [];
  const indexOf = new Map<string, number>();
  const data: TabularData[] = [];
  let totalSizeBytes = 0;
  for (const row of rows) {
    const meta = captureMetadataOf(row);
    const key = JSON.stringify(meta);
    let index = indexOf.get(key);
    if (index === undefined) {
      index = metadata.push(meta) - 1;
      indexOf.set(key, index);
    }
    data.push({ data: parseJson(row.data), metadataIndex: index, timeRequested: row.time_requested as Date, timeReceived: row.time_received as Date });
    totalSizeBytes += Number(row.size_bytes);
  }
  return { metadata, data, count: data.length, last: rows.length > 0 ? cursorOf(rows[rows.length - 1]) : '', totalSizeBytes };
}

function sourceWhere(request: { partId: string; resourceName: string; resourceSubtype: string; methodName: string }): NeutralWhere {
  if (!request.resourceName) throw invalidArgument('resource_name is required');
  if (!request.resourceSubtype) throw invalidArgument('resource_subtype (resource_api) is required');
  if (!request.methodName) throw invalidArgument('method_name is required');
  return {
    sql: 'part_id = ? AND component_name = ? AND component_type = ? AND method_name = ?',
    params: [request.partId, request.resourceName, request.resourceSubtype, request.methodName],
  };
}

const DAY_MS = 86_400_000;

/** Only data synced within this many days counts for GetLatestTabularData. */
export const latestWindowDays = 365;

export async function getLatestTabularData(store: TabularStore, request: GetLatestTabularDataRequest): Promise<GetLatestTabularDataResponse> {
  const source = sourceWhere(request);
  const rows = await store.query(
    `SELECT time_requested, time_synced, data FROM tabular_data
     WHERE ${source.sql} AND time_synced >= ?
     ORDER BY time_requested DESC, seq DESC LIMIT 1`,
    [...source.params, new Date(Date.now() - latestWindowDays * DAY_MS)],
  );
  if (rows.length === 0) return { found: false };
  return { found: true, timeCaptured: rows[0].time_requested as Date, timeSynced: rows[0].time_synced as Date, payload: parseJson(asRow(rows[0]).data) };
}

/** Streams the points of one source in capture order, a batch at a time, handing each to `emit`. */
export async function exportTabularData(
  store: TabularStore,
  request: ExportTabularDataRequest,
  emit: (point: ExportTabularDataResponse) => Promise<void>,
  batch = 1000,
): Promise<void> {
  const source = sourceWhere(request);
  const { start, end } = request.interval ?? {};
  if (start && end && start.getTime() > end.getTime()) throw invalidArgument('interval.start must not be after interval.end');
  let sql = source.sql;
  const params: SqlValue[] = [...source.params];
  if (start) {
    sql += ' AND time_requested >= ?';
    params.push(start);
  }
  if (end) {
    sql += ' AND time_requested < ?';
    params.push(end);
  }
  let last = '';
  for (;;) {
    const page = pageOf({ limit: batch, last, sortOrder: Order.ORDER_ASCENDING });
    // A plain keyset page on both: the source's rows are few next to the table's, and on PostgreSQL
    // the (part_id, component_name, method_name, time_requested, seq) index serves it in order.
    const rows = (
      store instanceof Store
        ? await store.query(`SELECT ${pointColumns.duckdb} FROM tabular_data WHERE ${sql}${page.after} ORDER BY ${page.orderBy} LIMIT ${batch}`, [
            ...params,
            ...page.afterParams,
          ])
        : await readPagePg(store, 'tabular_data', pointColumns[store.dialect], { sql, params }, page)
    ).map(asRow);
    for (const row of rows) {
      const meta = captureMetadataOf(row);
      await emit({
        partId: meta.partId,
        resourceName: meta.componentName,
        resourceSubtype: meta.componentType,
        methodName: meta.methodName,
        timeCaptured: row.time_requested as Date,
        organizationId: meta.organizationId,
        locationId: meta.locationId,
        robotName: meta.robotName,
        robotId: meta.robotId,
        partName: meta.partName,
        methodParameters: meta.methodParameters,
        tags: meta.tags,
        payload: parseJson(row.data),
      });
    }
    if (rows.length < batch) return;
    last = cursorOf(rows[rows.length - 1]);
  }
}

/** A bound on the field; 1e6 days is ~2700 years, a time both databases hold. */
export const maxDeleteDays = 1_000_000;

/** Deletes the caller's tabular data captured more than `days` days ago; 0 deletes all of it. */
export async function deleteTabularData(store: TabularStore, principal: KeyPrincipal, days: number): Promise<number> {
  if (!Number.isInteger(days) || days < 0 || days > maxDeleteDays) {
    throw invalidArgument(`delete_older_than_days must be an integer from 0 to ${maxDeleteDays}, got ${days}`);
  }
  const scope = scopeWhere(principal);
  if (days === 0) return store.execute(`DELETE FROM tabular_data WHERE ${scope.sql}`, scope.params);
  return store.execute(`DELETE FROM tabular_data WHERE ${scope.sql} AND time_requested < ?`, [...scope.params, new Date(Date.now() - days * DAY_MS)]);
}
