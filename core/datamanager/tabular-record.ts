// A tabular capture record, framed, encoded by hand: the same bytes as
// frame(SensorData.encode({metadata: {timeRequested, timeReceived, mimeType: ''}, struct: data}).finish())
// (tabular-record.test.ts compares them), in about a third of the time. At thousands of captures per
// second the generated encoder (a fork per nested message, a copy at finish) was the largest cost of
// the data manager's worker. The message is measured first, then written once into a buffer that already
// has room for the frame's head (length and CRC-32, see capture-file.ts).
//
// The Struct rules are ts-proto's: an object's own enumerable keys in order, a key whose value is
// undefined is left out, an undefined list item is an empty Value, and a value of any other type
// (bigint, function, symbol) is an error.
import { crc32 } from 'node:zlib';

const FRAME_HEAD = 8;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Sizes of the nested messages, in the order the writer meets them (pre-order). */
type Sizes = number[];

function valueSize(value: unknown, sizes: Sizes): number {
  if (value === null) return 2; // null_value = 0: tag + varint
  switch (typeof value) {
    case 'boolean':
      return 2;
    case 'number':
      return 9;
    case 'string': {
      const n = Buffer.byteLength(value);
      return 1 + varintSize(n) + n;
    }
    case 'undefined':
      return 0;
    case 'object': {
      const slot = sizes.push(0) - 1;
      const inner = Array.isArray(value) ? listSize(value, sizes) : structSize(value as Record<string, unknown>, sizes);
      sizes[slot] = inner;
      return 1 + varintSize(inner) + inner;
    }
    default:
      throw new Error(`unsupported value type in a tabular capture: ${typeof value}`);
  }
}

function listSize(list: unknown[], sizes: Sizes): number {
  let total = 0;
  for (const item of list) {
    const slot = sizes.push(0) - 1;
    const inner = valueSize(item, sizes);
    sizes[slot] = inner;
    total += 1 + varintSize(inner) + inner;
  }
  return total;
}

function structSize(object: Record<string, unknown>, sizes: Sizes): number {
  let total = 0;
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined) continue;
    const slot = sizes.push(0) - 1;
    const keyBytes = Buffer.byteLength(key);
    const valueSlot = sizes.push(0) - 1;
    const inner = valueSize(value, sizes);
    sizes[valueSlot] = inner;
    const entry = (keyBytes > 0 ? 1 + varintSize(keyBytes) + keyBytes : 0) + 1 + varintSize(inner) + inner;
    sizes[slot] = entry;
    total += 1 + varintSize(entry) + entry;
  }
  return total;
}

function timestampSize(ms: number): number {
  const seconds = Math.trunc(ms / 1000);
  const nanos = (ms % 1000) * 1_000_000;
  return (seconds !== 0 ? 1 + varintSize(seconds) : 0) + (nanos !== 0 ? 1 + varintSize(nanos) : 0);
}

class Out {
  pos: number;
  next = 0;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly sizes: Sizes,
  ) {
    this.pos = start;
  }
  byte(b: number): void {
    this.buf[this.pos++] = b;
  }
  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }
  string(s: string): void {
    this.varint(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
  value(value: unknown): void {
    if (value === null) {
      this.byte(8);
      this.byte(0);
      return;
    }
    switch (typeof value) {
      case 'boolean':
        this.byte(32);
        this.byte(value ? 1 : 0);
        return;
      case 'number':
        this.byte(17);
        this.pos = this.buf.writeDoubleLE(value, this.pos);
        return;
      case 'string':
        this.byte(26);
        this.string(value);
        return;
      case 'object': {
        const size = this.sizes[this.next++];
        if (Array.isArray(value)) {
          this.byte(50);
          this.varint(size);
          for (const item of value) {
            this.byte(10);
            this.varint(this.sizes[this.next++]);
            this.value(item);
          }
        } else {
          this.byte(42);
          this.varint(size);
          this.struct(value as Record<string, unknown>);
        }
        return;
      }
    }
  }
  struct(object: Record<string, unknown>): void {
    for (const key of Object.keys(object)) {
      const value = object[key];
      if (value === undefined) continue;
      this.byte(10);
      this.varint(this.sizes[this.next++]);
      if (key !== '') {
        this.byte(10);
        this.string(key);
      }
      this.byte(18);
      this.varint(this.sizes[this.next++]);
      this.value(value);
    }
  }
  timestamp(field: number, ms: number): void {
    const seconds = Math.trunc(ms / 1000);
    const nanos = (ms % 1000) * 1_000_000;
    this.byte((field << 3) | 2);
    this.varint(timestampSize(ms));
    if (seconds !== 0) {
      this.byte(8);
      this.varint(seconds);
    }
    if (nanos !== 0) {
      this.byte(16);
      this.varint(nanos);
    }
  }
}

/**
 * One framed record (u32 LE length, u32 LE CRC-32, SensorData) for a tabular capture. Times are epoch
 * milliseconds (whole, not negative).
 */
export function framedTabularRecord(requested: number, received: number, data: Record<string, unknown>): Buffer {
  const sizes: Sizes = [];
  const structBytes = structSize(data, sizes);
  const requestedBytes = timestampSize(requested);
  const receivedBytes = timestampSize(received);
  const metadataBytes = 1 + varintSize(requestedBytes) + requestedBytes + 1 + varintSize(receivedBytes) + receivedBytes;
  const length = 1 + varintSize(metadataBytes) + metadataBytes + 1 + varintSize(structBytes) + structBytes;
  const buf = Buffer.allocUnsafe(FRAME_HEAD + length);
  const out = new Out(buf, FRAME_HEAD, sizes);
  out.byte(10);
  out.varint(metadataBytes);
  out.timestamp(1, requested);
  out.timestamp(2, received);
  out.byte(18);
  out.varint(structBytes);
  out.struct(data);
  if (out.pos !== buf.byteLength) throw new Error(`tabular record: wrote ${out.pos - FRAME_HEAD} bytes of ${length}`);
  buf.writeUInt32LE(length, 0);
  buf.writeUInt32LE(crc32(buf.subarray(FRAME_HEAD)), 4);
  return buf;
}
