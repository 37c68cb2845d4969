// A tabular capture record, framed, encoded by hand: the same bytes as
// frame(SensorData.encode({metadata: {timeRequested, timeReceived, mimeType: ''}, struct: data}).finish())
// (tabular-record.test.ts compares them), in about a third of the time. At thousands of captures per
// second the generated encoder (a fork per nested message, a copy at finish) was the largest cost of
// the data manager's worker. The message is measured first, then written once into a buffer that already
// has room for the frame's head (length and CRC-32, see capture-file.ts). The Struct is measured and
// written by the shared wire codec (`plugins/formats/struct-wire/`, ts-proto's rules), which the cloud's
// decoder and the TypeScript client use too; this file frames SensorData around it.
import { crc32 } from 'node:zlib';
import { fieldSize, measureStruct, UnsupportedValueError, type NestedSizes } from '../../plugins/formats/struct-wire/size.js';
import { timestampSize, writeTimestamp } from '../../plugins/formats/struct-wire/timestamp.js';
import { StructWriter } from '../../plugins/formats/struct-wire/writer.js';

const FRAME_HEAD = 8;

/** measureStruct, its error worded for a capture and naming where the value is. */
function measure(data: Record<string, unknown>, sizes: NestedSizes): number {
  try {
    return measureStruct(data, sizes);
  } catch (err) {
    if (err instanceof UnsupportedValueError) throw new Error(`unsupported value type in a tabular capture: ${err.valueType} at ${err.path}`, { cause: err });
    throw err;
  }
}

/**
 * One framed record (u32 LE length, u32 LE CRC-32, SensorData) for a tabular capture. Times are epoch
 * milliseconds (whole, not negative).
 */
export function framedTabularRecord(requested: number, received: number, data: Record<string, unknown>): Buffer {
  const sizes: NestedSizes = [];
  const structBytes = measure(data, sizes);
  const requestedBytes = timestampSize(requested);
  const receivedBytes = timestampSize(received);
  const metadataBytes = fieldSize(requestedBytes) + fieldSize(receivedBytes);
  const length = fieldSize(metadataBytes) + fieldSize(structBytes);
  const buf = Buffer.allocUnsafe(FRAME_HEAD + length);
  const out = new StructWriter(buf, FRAME_HEAD, sizes);
  out.byte(10);
  out.varint(metadataBytes);
  writeTimestamp(out, 1, requested);
  writeTimestamp(out, 2, received);
  out.byte(18);
  out.varint(structBytes);
  out.struct(data);
  if (out.pos !== buf.byteLength) throw new Error(`tabular record: wrote ${out.pos - FRAME_HEAD} bytes of ${length}`);
  buf.writeUInt32LE(length, 0);
  buf.writeUInt32LE(crc32(buf.subarray(FRAME_HEAD)), 4);
  return buf;
}
