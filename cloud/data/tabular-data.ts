// Tabular reads and deletes: TabularDataByFilter, ExportTabularData, GetLatestTabularData,
// DeleteTabularData. The caller's scope is always part of the WHERE clause.
import type { DuckDBValue } from '@duckdb/node-api';
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
import type { Store } from '../store/store.js';
import { filterWhere, scopeWhere, timestampParam } from './filter.js';
import { readPage } from './page-query.js';
import { captureColumns, captureMetadataOf, cursorOf, pageOf, parseJson } from './rows.js';

const pointColumns = `seq, epoch_us(time_requested) AS t_us, ${captureColumns}, time_requested, time_received, data, size_bytes`;

export async function tabularDataByFilter(store: Store, principal: KeyPrincipal, request: TabularDataByFilterRequest): Promise<TabularDataByFilterResponse> {
  const where = filterWhere(request.dataRequest?.filter, 'tabular', principal, { includeInternal: request.includeInternalData });
  if (request.countOnly) {
    const rows = await store.query(`SELECT count(*) AS n, coalesce(sum(size_bytes), 0) AS bytes FROM tabular_data WHERE ${where.sql}`, where.params);
    return { metadata: [], data: [], count: Number(rows[0].n), last: '', totalSizeBytes: Number(rows[0].bytes) };
  }
  const page = pageOf(request.dataRequest);
  const rows = await readPage(store, 'tabular_data', pointColumns, where, page);
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

function sourceWhere(request: { partId: string; resourceName: string; resourceSubtype: string; methodName: string }): { sql: string; params: DuckDBValue[] } {
  if (!request.resourceName) throw invalidArgument('resource_name is required');
  if (!request.resourceSubtype) throw invalidArgument('resource_subtype (resource_api) is required');
  if (!request.methodName) throw invalidArgument('method_name is required');
  return {
    sql: 'part_id = ? AND component_name = ? AND component_type = ? AND method_name = ?',
    params: [request.partId, request.resourceName, request.resourceSubtype, request.methodName],
  };
}

/** Only data synced within this many days counts for GetLatestTabularData. */
export const latestWindowDays = 365;

export async function getLatestTabularData(store: Store, request: GetLatestTabularDataRequest): Promise<GetLatestTabularDataResponse> {
  const source = sourceWhere(request);
  const rows = await store.query(
    `SELECT time_requested, time_synced, data FROM tabular_data
     WHERE ${source.sql} AND time_synced >= now() - INTERVAL ${latestWindowDays} DAY
     ORDER BY time_requested DESC, seq DESC LIMIT 1`,
    source.params,
  );
  if (rows.length === 0) return { found: false };
  return { found: true, timeCaptured: rows[0].time_requested as Date, timeSynced: rows[0].time_synced as Date, payload: parseJson(rows[0].data) };
}

/** Streams the points of one source in capture order, a batch at a time, handing each to `emit`. */
export async function exportTabularData(
  store: Store,
  request: ExportTabularDataRequest,
  emit: (point: ExportTabularDataResponse) => Promise<void>,
  batch = 1000,
): Promise<void> {
  const source = sourceWhere(request);
  const { start, end } = request.interval ?? {};
  if (start && end && start.getTime() > end.getTime()) throw invalidArgument('interval.start must not be after interval.end');
  let sql = source.sql;
  const params = [...source.params];
  if (start) {
    sql += ' AND time_requested >= ?';
    params.push(timestampParam(start));
  }
  if (end) {
    sql += ' AND time_requested < ?';
    params.push(timestampParam(end));
  }
  let last = '';
  for (;;) {
    const page = pageOf({ limit: batch, last, sortOrder: Order.ORDER_ASCENDING });
    const rows = await store.query(`SELECT ${pointColumns} FROM tabular_data WHERE ${sql}${page.after} ORDER BY ${page.orderBy} LIMIT ${batch}`, [
      ...params,
      ...page.afterParams,
    ]);
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

/** Larger values would overflow DuckDB's interval arithmetic; 1e6 days is ~2700 years. */
export const maxDeleteDays = 1_000_000;

/** Deletes the caller's tabular data captured more than `days` days ago; 0 deletes all of it. */
export async function deleteTabularData(store: Store, principal: KeyPrincipal, days: number): Promise<number> {
  if (!Number.isInteger(days) || days < 0 || days > maxDeleteDays) {
    throw invalidArgument(`delete_older_than_days must be an integer from 0 to ${maxDeleteDays}, got ${days}`);
  }
  const scope = scopeWhere(principal);
  const age = days === 0 ? '' : ` AND time_requested < now() - INTERVAL ${days} DAY`;
  return store.execute(`DELETE FROM tabular_data WHERE ${scope.sql}${age}`, scope.params);
}
