// Conversions between DuckDB rows and API messages shared by the data readers.
import type { JS } from '@duckdb/node-api';
import type { BinaryMetadata, BoundingBox, CaptureMetadata } from '../../gen/platform/app/data/v1/data.js';
import { decodeCursor, encodeCursor, type Cursor } from './cursor.js';
import { invalidArgument } from '../../core/serving/status-error.js';
import type { Row } from '../store/store.js';
import { timestampTZValue, type DuckDBValue } from '@duckdb/node-api';
import { Order } from '../../gen/platform/app/data/v1/data.js';

export const defaultLimit = 50;
export const maxLimit = 10_000;

const text = (v: JS) => (v === null || v === undefined ? '' : String(v));
const json = (v: JS): Record<string, unknown> | undefined => (typeof v === 'string' && v.length > 0 ? (JSON.parse(v) as Record<string, unknown>) : undefined);

export const parseJson = json;

export const captureColumns =
  'organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type, component_name, method_name, method_parameters, tags';

export function captureMetadataOf(row: Row, mimeType = ''): CaptureMetadata {
  return {
    organizationId: text(row.organization_id),
    locationId: text(row.location_id),
    robotName: text(row.robot_name),
    robotId: text(row.robot_id),
    partName: text(row.part_name),
    partId: text(row.part_id),
    componentType: text(row.component_type),
    componentName: text(row.component_name),
    methodName: text(row.method_name),
    methodParameters: json(row.method_parameters),
    tags: ((row.tags as string[] | null) ?? []).slice(),
    mimeType,
  };
}

export function binaryMetadataOf(row: Row, bboxes: BoundingBox[]): BinaryMetadata {
  return {
    id: text(row.binary_data_id),
    captureMetadata: captureMetadataOf(row, text(row.mime_type)),
    timeRequested: row.time_requested as Date,
    timeReceived: row.time_received as Date,
    fileName: text(row.file_name),
    fileExt: text(row.file_ext),
    uri: text(row.uri),
    annotations: { bboxes, classifications: [] },
    datasetIds: ((row.dataset_ids as string[] | null) ?? []).slice(),
    binaryDataId: text(row.binary_data_id),
    fileSizeBytes: Number(row.file_size_bytes ?? 0),
  };
}

export function boundingBoxOf(row: Row): BoundingBox {
  return {
    id: text(row.id),
    label: text(row.label),
    xMinNormalized: Number(row.x_min_normalized),
    yMinNormalized: Number(row.y_min_normalized),
    xMaxNormalized: Number(row.x_max_normalized),
    yMaxNormalized: Number(row.y_max_normalized),
    confidence: row.confidence === null || row.confidence === undefined ? undefined : Number(row.confidence),
  };
}

export interface Page {
  limit: number;
  ascending: boolean;
  /** Extra WHERE clause (with AND) selecting rows after the cursor, and its params. */
  after: string;
  afterParams: DuckDBValue[];
  orderBy: string;
  cursor?: Cursor;
}

/** Limit, order and cursor of a DataRequest. ORDER_UNSPECIFIED is newest first. */
export function pageOf(request: { limit: number; last: string; sortOrder: Order } | undefined): Page {
  const limit = request?.limit ?? 0;
  if (!Number.isInteger(limit) || limit < 0) throw invalidArgument(`data_request.limit must be a non-negative integer, got ${limit}`);
  if (limit > maxLimit) throw invalidArgument(`data_request.limit must be at most ${maxLimit}, got ${limit}`);
  const order = request?.sortOrder ?? Order.ORDER_UNSPECIFIED;
  if (order !== Order.ORDER_UNSPECIFIED && order !== Order.ORDER_ASCENDING && order !== Order.ORDER_DESCENDING) {
    throw invalidArgument(`data_request.sort_order ${order} is not an Order`);
  }
  const ascending = order === Order.ORDER_ASCENDING;
  const page: Page = {
    limit: limit === 0 ? defaultLimit : limit,
    ascending,
    after: '',
    afterParams: [],
    orderBy: ascending ? 'time_requested ASC, seq ASC' : 'time_requested DESC, seq DESC',
  };
  if (request?.last) {
    const cursor = decodeCursor(request.last);
    const t = timestampTZValue(cursor.timeMicros);
    // The first conjunct alone lets DuckDB skip whole row groups by their min/max capture time.
    page.after = ascending ? ' AND time_requested >= ? AND (time_requested > ? OR seq > ?)' : ' AND time_requested <= ? AND (time_requested < ? OR seq < ?)';
    page.afterParams = [t, t, cursor.seq];
    page.cursor = cursor;
  }
  return page;
}

/** The cursor naming a row (selected with `epoch_us(time_requested) AS t_us, seq`). */
export function cursorOf(row: Row): string {
  return encodeCursor({ timeMicros: BigInt(row.t_us as bigint), seq: BigInt(row.seq as bigint) });
}
