// A direct decoder and encoder for DataCaptureUploadRequest, the hot path of tabular ingest. The
// generated code turns each google.protobuf.Struct into Value/FieldsEntry objects on the way in and on
// the way out, which costs more than the database insert; the Structs are read and written straight from
// plain objects by the wire codec the machine uses too (`plugins/formats/struct-wire/`). This file frames
// the request around them and counts the request's limits.
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { invalidArgument } from '../../core/serving/status-error.js';
import { readStruct, type ValueBudget } from '../../plugins/formats/struct-wire/reader.js';
import { fieldSize, measureStruct, type NestedSizes } from '../../plugins/formats/struct-wire/size.js';
import { isPlainTime, timestampSize, writeTimestamp } from '../../plugins/formats/struct-wire/timestamp.js';
import { StructWriter } from '../../plugins/formats/struct-wire/writer.js';
import { SensorMetadata, UploadMetadata, type DataCaptureUploadRequest, type SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';

/** Caps checked while decoding, before the objects they would cost are built (issue 27, finding 5). */
export interface DecodeLimits {
  /** Items of sensor_contents (PLATFORM_UPLOAD_MAX_POINTS). */
  maxPoints: number;
  /** Struct fields, values and list elements in the whole request (PLATFORM_UPLOAD_MAX_VALUES). */
  maxValues: number;
}

const unlimited: DecodeLimits = { maxPoints: Infinity, maxValues: Infinity };

// The values the decode in progress may still build. Decoding is synchronous, so one budget serves.
let valuesLimit = Infinity;
let valuesPoint = -1;

/**
 * Counts each decoded entry and value. An empty value is 2 bytes on the wire and an object of dozens in
 * memory, so the count, not the request's size, bounds what a request can cost.
 */
const budget: ValueBudget = {
  left: Infinity,
  exceeded(): never {
    throw invalidArgument(
      `${valuesPoint < 0 ? 'metadata' : `sensor_contents[${valuesPoint}]`}: the request holds more than ${valuesLimit} values (fields, values and list items; PLATFORM_UPLOAD_MAX_VALUES); split it into several requests`,
    );
  },
};

/** int64 seconds as a number, refusing what a number cannot hold exactly (as the generated code does). */
function int64ToNumber(value: bigint | string): number {
  const n = Number(value.toString());
  if (n > Number.MAX_SAFE_INTEGER) throw new Error('Value is larger than Number.MAX_SAFE_INTEGER');
  if (n < Number.MIN_SAFE_INTEGER) throw new Error('Value is smaller than Number.MIN_SAFE_INTEGER');
  return n;
}

// Timestamp{1 seconds: int64, 2 nanos: int32}, read straight into a Date as the generated fromTimestamp
// does, without the intermediate Timestamp object. Like the generated decoders, a read stops at an
// end-group or zero tag.
function readDate(r: BinaryReader, end: number): Date {
  let seconds = 0;
  let nanos = 0;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 8) seconds = int64ToNumber(r.int64());
    else if (tag === 16) nanos = r.int32();
    else if ((tag & 7) === 4 || tag === 0) break;
    else r.skip(tag & 7);
  }
  return new Date(seconds * 1_000 + nanos / 1_000_000);
}

// SensorMetadata{1 time_requested, 2 time_received: Timestamp, 3 mime_type: string}.
function readSensorMetadata(r: BinaryReader, end: number): SensorMetadata {
  const metadata: SensorMetadata = { timeRequested: undefined, timeReceived: undefined, mimeType: '' };
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 10) metadata.timeRequested = readDate(r, r.uint32() + r.pos);
    else if (tag === 18) metadata.timeReceived = readDate(r, r.uint32() + r.pos);
    else if (tag === 26) metadata.mimeType = r.string();
    else if ((tag & 7) === 4 || tag === 0) break;
    else r.skip(tag & 7);
  }
  return metadata;
}

/**
 * Decodes a request, refusing it (INVALID_ARGUMENT naming the field and the limit) as soon as it passes
 * `limits`: 16M empty points are 61 MiB on the wire and took 6.2 GB once decoded.
 */
export function decodeDataCaptureUploadRequest(bytes: Uint8Array, limits: DecodeLimits = unlimited): DataCaptureUploadRequest {
  budget.left = valuesLimit = limits.maxValues;
  valuesPoint = -1;
  try {
    return decodeRequest(bytes, limits.maxPoints);
  } finally {
    budget.left = valuesLimit = Infinity;
  }
}

const tooManyPoints = (maxPoints: number) =>
  invalidArgument(`sensor_contents: more than ${maxPoints} items in one request (PLATFORM_UPLOAD_MAX_POINTS); split it into several requests`);

/**
 * Counts the items of sensor_contents by their framing alone, before any is decoded: a request over the
 * cap (16M empty points in 61 MiB) is refused in about a millisecond, where decoding its first 100,000
 * points took 20 to 50 ms of the thread and left as many objects to collect, while every other
 * organization's calls waited.
 */
function checkPointCount(bytes: Uint8Array, maxPoints: number): void {
  if (maxPoints === Infinity) return;
  const r = new BinaryReader(bytes);
  let points = 0;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 18 && ++points > maxPoints) throw tooManyPoints(maxPoints);
    r.skip(tag & 7);
  }
}

function decodeRequest(bytes: Uint8Array, maxPoints: number): DataCaptureUploadRequest {
  checkPointCount(bytes, maxPoints);
  const r = new BinaryReader(bytes);
  const request: DataCaptureUploadRequest = { metadata: undefined, sensorContents: [] };
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === WireType.LengthDelimited) {
      request.metadata = UploadMetadata.decode(r, r.uint32());
    } else if (field === 2 && (tag & 7) === WireType.LengthDelimited) {
      if (request.sensorContents.length >= maxPoints) throw tooManyPoints(maxPoints);
      valuesPoint = request.sensorContents.length;
      const end = r.uint32() + r.pos;
      const item: SensorData = { metadata: undefined, struct: undefined, binary: undefined };
      while (r.pos < end) {
        const t = r.uint32();
        switch (t >>> 3) {
          case 1:
            item.metadata = readSensorMetadata(r, r.uint32() + r.pos);
            break;
          case 2:
            item.struct = readStruct(r, r.uint32() + r.pos, budget);
            break;
          case 3:
            item.binary = Buffer.from(r.bytes());
            break;
          default:
            r.skip(t & 7);
        }
      }
      request.sensorContents.push(item);
    } else {
      r.skip(tag & 7);
    }
  }
  return request;
}

// ---- encoding (the client's side) ----
// Byte for byte what the generated encoder writes (the Struct rules are ts-proto's, see
// `plugins/formats/struct-wire/size.ts`; an own key "__proto__" is data and is written, as
// scripts/patch-struct.mjs makes the generated Struct code do too). The request is measured first and
// then written once into one buffer, as the machine writes its capture records.

/** A point's SensorMetadata: its size when written here, or the generated encoding of an odd time. */
function metadataPlan(m: SensorMetadata): number | Uint8Array {
  const requested = m.timeRequested?.getTime() ?? 0;
  const received = m.timeReceived?.getTime() ?? 0;
  if (!isPlainTime(requested) || !isPlainTime(received)) return SensorMetadata.encode(m).finish();
  return (
    (m.timeRequested !== undefined ? fieldSize(timestampSize(requested)) : 0) +
    (m.timeReceived !== undefined ? fieldSize(timestampSize(received)) : 0) +
    (m.mimeType !== '' ? fieldSize(Buffer.byteLength(m.mimeType)) : 0)
  );
}

function writeMetadata(out: StructWriter, m: SensorMetadata, plan: number | Uint8Array): void {
  out.byte(10);
  if (typeof plan !== 'number') {
    out.varint(plan.byteLength);
    out.raw(plan);
    return;
  }
  out.varint(plan);
  if (m.timeRequested !== undefined) writeTimestamp(out, 1, m.timeRequested.getTime());
  if (m.timeReceived !== undefined) writeTimestamp(out, 2, m.timeReceived.getTime());
  if (m.mimeType !== '') {
    out.byte(26);
    out.string(m.mimeType);
  }
}

/** Encodes a DataCaptureUploadRequest exactly as DataCaptureUploadRequest.encode does, about twice as fast. */
export function encodeDataCaptureUploadRequest(request: DataCaptureUploadRequest): Buffer {
  const head = request.metadata !== undefined ? UploadMetadata.encode(request.metadata).finish() : undefined;
  const items = request.sensorContents;
  const plans: (number | Uint8Array)[] = new Array(items.length);
  const structs: number[] = new Array(items.length);
  const itemSizes: number[] = new Array(items.length);
  const sizes: NestedSizes = [];
  let length = head !== undefined ? fieldSize(head.byteLength) : 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    let size = 0;
    if (item.metadata !== undefined) {
      const plan = (plans[i] = metadataPlan(item.metadata));
      size += fieldSize(typeof plan === 'number' ? plan : plan.byteLength);
    }
    if (item.struct !== undefined) size += fieldSize((structs[i] = measureStruct(item.struct, sizes)));
    if (item.binary !== undefined) size += fieldSize(item.binary.byteLength);
    itemSizes[i] = size;
    length += fieldSize(size);
  }
  const out = new StructWriter(Buffer.allocUnsafe(length), 0, sizes);
  if (head !== undefined) {
    out.byte(10);
    out.varint(head.byteLength);
    out.raw(head);
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    out.byte(18);
    out.varint(itemSizes[i]);
    if (item.metadata !== undefined) writeMetadata(out, item.metadata, plans[i]);
    if (item.struct !== undefined) {
      out.byte(18);
      out.varint(structs[i]);
      out.struct(item.struct);
    }
    if (item.binary !== undefined) {
      out.byte(26);
      out.varint(item.binary.byteLength);
      out.raw(item.binary);
    }
  }
  if (out.pos !== length) throw new Error(`DataCaptureUploadRequest: wrote ${out.pos} bytes of ${length}`);
  return out.buf;
}
