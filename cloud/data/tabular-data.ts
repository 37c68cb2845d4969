// Tabular reads and deletes: TabularDataByFilter, ExportTabularData, GetLatestTabularData,
// DeleteTabularData. The caller's scope is always part of the WHERE clause. Each runs on either
// TabularStore backend (issue 33): the statements are the same but for a page's reader (DuckDB's
// time windows in page-query.ts, PostgreSQL's index walk in pg-page.ts) and the row's time in
// microseconds (timeMicrosColumn); times and lists go in as Date and string[] parameters. On
// PostgreSQL an organization's days sealed by the SQL engine are read from their segments too
// (sealed-readings.ts) and merged with the unsealed rows, and DeleteTabularData rewrites them (sealed-deletes.ts).
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
import type { Dialect, SqlValue, StoreWithBlobs, TabularRow, TabularStore } from '../store/tabular.js';
import { filterWhere, scopeWhere, timeValue, type NeutralWhere } from './filter.js';
import { readPage } from './page-query.js';
import { readPagePg, timeMicrosColumn } from './pg-page.js';
import { captureColumns, captureMetadataOf, cursorOf, pageOf, parseJson, type Page } from './rows.js';
import { deleteSealedReadings } from './sealed-deletes.js';
import { readReadings, type Bounds } from './sealed-readings.js';

const pointColumnsOf = (dialect: Dialect) =>
  `seq, ${timeMicrosColumn(dialect)}, ${captureColumns}, time_requested, time_received, time_synced, data, size_bytes`;
const pointColumns: Record<Dialect, string> = { duckdb: pointColumnsOf('duckdb'), postgres: pointColumnsOf('postgres') };

const asRow = (row: TabularRow) => row as Row;

/** A WHERE clause in both dialects: PostgreSQL's for the unsealed rows, DuckDB's for sealed segments. */
interface Wheres {
  organizationId: string;
  pg: NeutralWhere;
  duck: NeutralWhere;
}

/** Rows of two pages in the page's order, the first `limit` of them. */
function mergePages(a: Row[], b: Row[], page: Page): Row[] {
  if (b.length === 0) return a;
  const key = (r: Row): [bigint, bigint] => [BigInt(r.t_us as bigint), BigInt(r.seq as bigint)];
  const sign = page.ascending ? 1 : -1;
  return [...a, ...b]
    .sort((x, y) => {
      const [tx, sx] = key(x);
      const [ty, sy] = key(y);
      return sign * (tx !== ty ? (tx < ty ? -1 : 1) : sx < sy ? -1 : sx > sy ? 1 : 0);
    })
    .slice(0, page.limit);
}

/**
 * One page of tabular_data: DuckDB's time-window reader; on PostgreSQL the index walk over the unsealed
 * rows, merged with the sealed segments that can hold rows of the page (those reaching past the
 * cursor, and past the unsealed page's last row when it is full).
 */
async function readPointPage(store: TabularStore, where: NeutralWhere | Wheres, page: Page, plain = false): Promise<Row[]> {
  if (store instanceof Store) {
    const w = where as NeutralWhere;
    if (!plain) return (await readPage(store, 'tabular_data', pointColumns.duckdb, w, page)).map(asRow);
    return store.query(`SELECT ${pointColumns.duckdb} FROM tabular_data WHERE ${w.sql}${page.after} ORDER BY ${page.orderBy} LIMIT ${page.limit}`, [
      ...w.params,
      ...page.afterParams,
    ]);
  }
  const w = where as Wheres;
  return readReadings(
    store,
    w.organizationId,
    async () => (await readPagePg(store, 'tabular_data', pointColumns.postgres, w.pg, page)).map(asRow),
    async (files, tail) => {
      const cursor = page.cursor?.timeMicros;
      const edge = tail.length === page.limit ? BigInt(tail[tail.length - 1].t_us as bigint) : undefined;
      const keep = page.ascending
        ? (b: Bounds) => (cursor === undefined || b.hi >= cursor) && (edge === undefined || b.lo <= edge)
        : (b: Bounds) => (cursor === undefined || b.lo <= cursor) && (edge === undefined || b.hi >= edge);
      const sealed = await files.query(
        (from) => `SELECT ${pointColumns.duckdb} FROM ${from} WHERE (${w.duck.sql})${page.after} ORDER BY ${page.orderBy} LIMIT ${page.limit}`,
        [...w.duck.params, ...page.afterParams],
        keep,
      );
      return mergePages(tail, sealed, page);
    },
  );
}

/** The filter's WHERE clause for the store: on PostgreSQL in both dialects (see Wheres). */
function whereOf(store: TabularStore, principal: KeyPrincipal, request: TabularDataByFilterRequest): NeutralWhere | Wheres {
  const of = (dialect: Dialect) => filterWhere(request.dataRequest?.filter, 'tabular', principal, { includeInternal: request.includeInternalData, dialect });
  return store.dialect === 'duckdb' ? of('duckdb') : { organizationId: principal.organizationId, pg: of('postgres'), duck: of('duckdb') };
}

async function countPoints(store: TabularStore, where: NeutralWhere | Wheres): Promise<{ n: number; bytes: number }> {
  const sql = (sqlWhere: string, from = 'tabular_data') => `SELECT count(*) AS n, coalesce(sum(size_bytes), 0) AS bytes FROM ${from} WHERE ${sqlWhere}`;
  const count = (rows: Record<string, unknown>[]) => ({ n: Number(rows[0].n), bytes: Number(rows[0].bytes) });
  if (store.dialect === 'duckdb') return count(await store.query(sql((where as NeutralWhere).sql), (where as NeutralWhere).params));
  const w = where as Wheres;
  return readReadings(
    store,
    w.organizationId,
    async () => count(await store.query(sql(w.pg.sql), w.pg.params)),
    async (files, tail) => {
      const sealed = count(await files.query((from) => sql(`(${w.duck.sql})`, from), w.duck.params));
      return { n: tail.n + sealed.n, bytes: tail.bytes + sealed.bytes };
    },
  );
}

export async function tabularDataByFilter(
  store: TabularStore,
  principal: KeyPrincipal,
  request: TabularDataByFilterRequest,
): Promise<TabularDataByFilterResponse> {
  const where = whereOf(store, principal, request);
  if (request.countOnly) {
    const { n, bytes } = await countPoints(store, where);
    return { metadata: [], data: [], count: n, last: '', totalSizeBytes: bytes };
  }
  const page = pageOf(request.dataRequest);
  const rows = await readPointPage(store, where, page);
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

/**
 * A source's WHERE clause (the same SQL in both dialects) as the page reader takes it: on PostgreSQL
 * with the part's organization, whose sealed segments hold the source's sealed days.
 */
async function sourceWheres(store: TabularStore, partId: string, where: NeutralWhere): Promise<NeutralWhere | Wheres | undefined> {
  if (store.dialect === 'duckdb') return where;
  const [part] = await store.query('SELECT organization_id FROM machine_parts WHERE id = ?', [partId]);
  return part ? { organizationId: String(part.organization_id), pg: where, duck: where } : undefined;
}

/** Only data synced within this many days counts for GetLatestTabularData. */
export const latestWindowDays = 365;

export async function getLatestTabularData(store: TabularStore, request: GetLatestTabularDataRequest): Promise<GetLatestTabularDataResponse> {
  const source = sourceWhere(request);
  const synced: NeutralWhere = { sql: `${source.sql} AND time_synced >= ?`, params: [...source.params, new Date(Date.now() - latestWindowDays * DAY_MS)] };
  const where = await sourceWheres(store, request.partId, synced);
  const rows = where ? await readPointPage(store, where, pageOf({ limit: 1, last: '', sortOrder: Order.ORDER_DESCENDING }), true) : [];
  if (rows.length === 0) return { found: false };
  return { found: true, timeCaptured: rows[0].time_requested as Date, timeSynced: rows[0].time_synced as Date, payload: parseJson(rows[0].data) };
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
  // A time before PostgreSQL's first (4713 BC) is given as its '-infinity' (timeValue), not refused.
  if (start) {
    sql += ' AND time_requested >= ?';
    params.push(timeValue(store.dialect, start));
  }
  if (end) {
    sql += ' AND time_requested < ?';
    params.push(timeValue(store.dialect, end));
  }
  const where = await sourceWheres(store, request.partId, { sql, params });
  if (!where) return;
  let last = '';
  for (;;) {
    const page = pageOf({ limit: batch, last, sortOrder: Order.ORDER_ASCENDING });
    // A plain keyset page on both (no time windows: the source's rows are few next to the table's); on
    // PostgreSQL the (part_id, component_name, method_name, time_requested, seq) index serves it in order.
    const rows = await readPointPage(store, where, page, true);
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

/**
 * Deletes the caller's tabular data captured more than `days` days ago; 0 deletes all of it. On
 * PostgreSQL the unsealed rows first, then the sealed ones (sealed-deletes.ts): a day sealed between
 * the two had its rows deleted before it was sealed, or has them in the segments read after.
 */
export async function deleteTabularData(store: StoreWithBlobs, principal: KeyPrincipal, days: number): Promise<number> {
  if (!Number.isInteger(days) || days < 0 || days > maxDeleteDays) {
    throw invalidArgument(`delete_older_than_days must be an integer from 0 to ${maxDeleteDays}, got ${days}`);
  }
  const scope = scopeWhere(principal);
  const before = days === 0 ? undefined : new Date(Date.now() - days * DAY_MS);
  const unsealed = before
    ? await store.execute(`DELETE FROM tabular_data WHERE ${scope.sql} AND time_requested < ?`, [...scope.params, before])
    : await store.execute(`DELETE FROM tabular_data WHERE ${scope.sql}`, scope.params);
  return unsealed + (await deleteSealedReadings(store, principal, before));
}
