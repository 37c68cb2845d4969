// DataService.ExportMcap: the captured data a filter selects, as one indexed MCAP file with zstd
// chunks, written straight into the call (each write waits for the client when its buffer is full).
// Channels: one per (component, method) of readings, images and point clouds, and one per part for log
// lines (`/<component>/<method>`, `/log/<part name>`). Messages go in time order (capture time;
// ties keep readings, images, logs in that order), so a reader that streams the file sees them sorted.
import { McapWriter, type IWritable } from '@mcap/core';
import * as zstd from '@foxglove/wasm-zstd';
import { failedPrecondition, invalidArgument, resourceExhausted } from '../../core/serving/status-error.js';
import type { Filter } from '../../gen/platform/app/data/v1/data.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import type { SqlValue, StoreWithBlobs, TabularStore } from '../store/tabular.js';
import { filterWhere, timeValue, type NeutralWhere } from './filter.js';
import {
  imageMessage,
  imageSchema,
  logMessage,
  logSchema,
  nanosOf,
  pointCloudMessage,
  pointCloudSchema,
  tabularMessage,
  tabularSchema,
  type SchemaDef,
} from './mcap-messages.js';

/** Messages one export may hold: past it, the filter must be narrower. */
export const maxMcapMessages = 1_000_000;
/** Chunk size before compression: Foxglove's writers use 1-4 MiB. */
const chunkSize = 4 * 2 ** 20;

type Source = 'tabular' | 'binary' | 'log';
interface Item {
  source: Source;
  time: Date;
  order: number;
  row: Record<string, unknown>;
}

/** Binary-only filter fields: a filter with any of them selects no readings or logs. */
const binaryOnly = (f: Filter | undefined) => !!f && (f.mimeType.length > 0 || f.bboxLabels.length > 0 || !!f.datasetId);

async function readings(store: TabularStore, where: NeutralWhere): Promise<Item[]> {
  const rows = await store.query(
    `SELECT part_id, component_type, component_name, method_name, time_requested, CAST(data AS VARCHAR) AS data FROM tabular_data
     WHERE ${where.sql} ORDER BY time_requested, seq LIMIT ${maxMcapMessages + 1}`,
    where.params,
  );
  return rows.map((row, order) => ({ source: 'tabular', time: row.time_requested as Date, order, row }));
}

async function binaries(store: TabularStore, where: NeutralWhere): Promise<Item[]> {
  const rows = await store.query(
    `SELECT binary_data_id, part_id, component_name, method_name, mime_type, time_requested, blob_key, file_size_bytes FROM binary_data
     WHERE ${where.sql} AND (mime_type IN ('image/jpeg', 'image/png') OR mime_type = 'pointcloud/pcd')
     ORDER BY time_requested, seq LIMIT ${maxMcapMessages + 1}`,
    where.params,
  );
  return rows.map((row, order) => ({ source: 'binary', time: row.time_requested as Date, order, row }));
}

/** The parts whose logs go in: the filter's part, or the parts of its machine, each within the caller's scope. */
async function logs(store: TabularStore, authorizer: Authorizer, principal: KeyPrincipal, filter: Filter | undefined): Promise<Item[]> {
  if (!filter || binaryOnly(filter) || (!filter.partId && !filter.robotId)) return [];
  const parts = await store.query(
    `SELECT id, name, organization_id, location_id, machine_id FROM machine_parts WHERE ${filter.partId ? 'id = ?' : 'machine_id = ?'}`,
    [filter.partId || filter.robotId],
  );
  const visible = parts.filter((p) =>
    authorizer.covers(principal, { organizationId: String(p.organization_id), locationId: String(p.location_id), machineId: String(p.machine_id) }),
  );
  if (visible.length === 0) return [];
  const clauses = [`part_id IN (${visible.map(() => '?').join(', ')})`];
  const params: SqlValue[] = visible.map((p) => String(p.id));
  const { start, end } = filter.interval ?? {};
  if (start) clauses.push('time >= ?');
  if (end) clauses.push('time < ?');
  const names = new Map(visible.map((p) => [String(p.id), String(p.name)]));
  let rows;
  try {
    rows = await store.query(
      `SELECT part_id, time, level, logger_name, message FROM logs.part_logs WHERE ${clauses.join(' AND ')} ORDER BY time, seq LIMIT ${maxMcapMessages + 1}`,
      [...params, ...(start ? [timeValue(store.dialect, start)] : []), ...(end ? [timeValue(store.dialect, end)] : [])],
    );
  } catch (err) {
    // A cloud without the parts service has no log table: there are no logs to export.
    if (/part_logs/.test((err as Error).message)) return [];
    throw err;
  }
  return rows.map((row, order) => ({ source: 'log', time: row.time as Date, order, row: { ...row, part_name: names.get(String(row.part_id)) } }));
}

const rank: Record<Source, number> = { tabular: 0, binary: 1, log: 2 };

/** Writes the MCAP of the filter's data through `sink`; returns the number of messages. */
export async function exportMcap(
  store: StoreWithBlobs,
  authorizer: Authorizer,
  principal: KeyPrincipal,
  filter: Filter | undefined,
  sink: (bytes: Uint8Array) => Promise<void>,
): Promise<number> {
  const options = { includeInternal: false, dialect: store.dialect };
  const tabular = binaryOnly(filter) ? [] : await readings(store, filterWhere(filter, 'tabular', principal, options));
  const binary = await binaries(store, filterWhere(filter, 'binary', principal, options));
  const items = [...tabular, ...binary, ...(await logs(store, authorizer, principal, filter))];
  if (items.length > maxMcapMessages) throw resourceExhausted(`filter: selects more than ${maxMcapMessages} messages; narrow it (time range, part, component)`);
  items.sort((a, b) => a.time.getTime() - b.time.getTime() || rank[a.source] - rank[b.source] || a.order - b.order);

  await zstd.isLoaded;
  let position = 0n;
  const writable: IWritable = {
    position: () => position,
    write: async (buffer) => {
      position += BigInt(buffer.byteLength);
      await sink(buffer);
    },
  };
  const writer = new McapWriter({
    writable,
    chunkSize,
    compressChunk: (data) => ({ compression: 'zstd', compressedData: zstd.compress(data, 3) }),
  });
  await writer.start({ profile: '', library: 'platform-cloud ExportMcap' });
  const schemas = new Map<string, number>();
  const channels = new Map<string, number>();
  // Keyed by topic and schema: readings and images of one component and method get a channel each.
  const channelOf = async (topic: string, schema: SchemaDef): Promise<number> => {
    const key = `${topic}\u0000${schema.name}`;
    let id = channels.get(key);
    if (id !== undefined) return id;
    let schemaId = schemas.get(schema.name);
    if (schemaId === undefined) {
      schemaId = await writer.registerSchema({ name: schema.name, encoding: 'jsonschema', data: Buffer.from(schema.data) });
      schemas.set(schema.name, schemaId);
    }
    id = await writer.registerChannel({ topic, schemaId, messageEncoding: 'json', metadata: new Map() });
    channels.set(key, id);
    return id;
  };
  const sequences = new Map<number, number>();
  for (const item of items) {
    const r = item.row;
    let topic: string;
    let schema: SchemaDef;
    let body: string;
    if (item.source === 'tabular') {
      topic = `/${String(r.component_name)}/${String(r.method_name)}`;
      schema = tabularSchema;
      body = tabularMessage({
        time: item.time,
        partId: String(r.part_id),
        componentType: String(r.component_type ?? ''),
        componentName: String(r.component_name),
        methodName: String(r.method_name),
        data: JSON.parse(String(r.data ?? 'null')),
      });
    } else if (item.source === 'binary') {
      const bytes = await store.blobs.get(String(r.blob_key), Number(r.file_size_bytes ?? 0));
      if (!bytes) throw failedPrecondition(`the content of binary data ${String(r.binary_data_id)} is missing from the blob store`);
      topic = `/${String(r.component_name)}/${String(r.method_name)}`;
      if (r.mime_type === 'pointcloud/pcd') {
        schema = pointCloudSchema;
        try {
          body = pointCloudMessage(item.time, String(r.component_name), bytes);
        } catch (err) {
          throw invalidArgument(
            `binary data ${String(r.binary_data_id)} is not a readable PCD file (${(err as Error).message}); leave it out with filter.mime_type`,
          );
        }
      } else {
        schema = imageSchema;
        body = imageMessage(item.time, String(r.component_name), String(r.mime_type), bytes);
      }
    } else {
      topic = `/log/${String(r.part_name)}`;
      schema = logSchema;
      body = logMessage({ time: item.time, level: String(r.level), loggerName: String(r.logger_name), message: String(r.message) });
    }
    const channelId = await channelOf(topic, schema);
    const sequence = (sequences.get(channelId) ?? 0) + 1;
    sequences.set(channelId, sequence);
    const ns = nanosOf(item.time);
    await writer.addMessage({ channelId, sequence, logTime: ns, publishTime: ns, data: Buffer.from(body) });
  }
  await writer.end();
  return items.length;
}
