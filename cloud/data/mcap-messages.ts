// The MCAP schemas and message bodies of an export. Foxglove and Lichtblick show foxglove.* natively:
// images are foxglove.CompressedImage, point clouds foxglove.PointCloud, log lines foxglove.Log (their
// JSON schemas from @foxglove/schemas). A tabular reading has no Foxglove type: it is a JSON message of
// our own schema platform.TabularReading. Every message is JSON (bytes as base64, as the schemas say).
import { CompressedImage, Log, PointCloud } from '@foxglove/schemas/jsonschema.js';
import { readPcd } from '../../plugins/formats/pcd/pcd-reader.js';

export interface SchemaDef {
  name: string;
  /** The JSON schema text. */
  data: string;
}

const time = {
  type: 'object',
  title: 'time',
  properties: { sec: { type: 'integer', minimum: 0 }, nsec: { type: 'integer', minimum: 0, maximum: 999999999 } },
};

export const tabularSchema: SchemaDef = {
  name: 'platform.TabularReading',
  data: JSON.stringify({
    title: 'platform.TabularReading',
    description: 'One tabular reading captured on a machine part (SPEC.md "Data records")',
    type: 'object',
    properties: {
      timestamp: { ...time, description: 'When the reading was requested' },
      part_id: { type: 'string' },
      component_type: { type: 'string' },
      component_name: { type: 'string' },
      method_name: { type: 'string' },
      data: { type: 'object', description: 'The reading as captured' },
    },
    required: ['timestamp', 'part_id', 'component_name', 'method_name', 'data'],
  }),
};

const schemaOf = (schema: { title: string }): SchemaDef => ({ name: schema.title, data: JSON.stringify(schema) });
export const imageSchema = schemaOf(CompressedImage);
export const pointCloudSchema = schemaOf(PointCloud);
export const logSchema = schemaOf(Log);

export const stampOf = (date: Date) => {
  const ms = date.getTime();
  return { sec: Math.floor(ms / 1000), nsec: (((ms % 1000) + 1000) % 1000) * 1_000_000 };
};

/** Nanoseconds since the epoch, MCAP's time. */
export const nanosOf = (date: Date): bigint => BigInt(date.getTime()) * 1_000_000n;

export function tabularMessage(row: { time: Date; partId: string; componentType: string; componentName: string; methodName: string; data: unknown }): string {
  return JSON.stringify({
    timestamp: stampOf(row.time),
    part_id: row.partId,
    component_type: row.componentType,
    component_name: row.componentName,
    method_name: row.methodName,
    data: row.data,
  });
}

export function imageMessage(time: Date, frameId: string, mimeType: string, bytes: Uint8Array): string {
  const format = mimeType.replace(/^image\//, '');
  return JSON.stringify({ timestamp: stampOf(time), frame_id: frameId, format, data: Buffer.from(bytes).toString('base64') });
}

/** foxglove.PointCloud field types. */
const FLOAT32 = 7;
const UINT32 = 5;

/** A PCD file as foxglove.PointCloud: x, y, z in metres (FLOAT32) and, when the file has colour, a packed rgba (UINT32). */
export function pointCloudMessage(time: Date, frameId: string, pcd: Uint8Array): string {
  const cloud = readPcd(pcd);
  const n = cloud.positions.length / 3;
  const stride = cloud.colors ? 16 : 12;
  const data = Buffer.alloc(n * stride);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 3; k++) data.writeFloatLE(cloud.positions[i * 3 + k] / 1000, i * stride + k * 4);
    if (cloud.colors) {
      const argb = cloud.colors[i];
      // 0xAARRGGBB to r, g, b, a bytes in order.
      data.writeUInt32LE((((argb >>> 16) & 0xff) | (((argb >>> 8) & 0xff) << 8) | ((argb & 0xff) << 16) | ((argb >>> 24) << 24)) >>> 0, i * stride + 12);
    }
  }
  const fields = [
    { name: 'x', offset: 0, type: FLOAT32 },
    { name: 'y', offset: 4, type: FLOAT32 },
    { name: 'z', offset: 8, type: FLOAT32 },
    ...(cloud.colors ? [{ name: 'rgba', offset: 12, type: UINT32 }] : []),
  ];
  return JSON.stringify({
    timestamp: stampOf(time),
    frame_id: frameId,
    pose: { position: { x: 0, y: 0, z: 0 }, orientation: { x: 0, y: 0, z: 0, w: 1 } },
    point_stride: stride,
    fields,
    data: data.toString('base64'),
  });
}

/** foxglove.LogLevel of a platform level name. */
const logLevels: Record<string, number> = { debug: 1, info: 2, warn: 3, warning: 3, error: 4, fatal: 5 };

export function logMessage(entry: { time: Date; level: string; loggerName: string; message: string }): string {
  return JSON.stringify({
    timestamp: stampOf(entry.time),
    level: logLevels[entry.level.toLowerCase()] ?? 0,
    message: entry.message,
    name: entry.loggerName,
    file: '',
    line: 0,
  });
}
