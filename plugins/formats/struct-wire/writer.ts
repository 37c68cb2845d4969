// The writer: a google.protobuf.Struct written from a plain object into a buffer already sized by the
// size calculator (size.ts), in one pass, byte for byte what the generated ts-proto encoder writes.
// It also writes the few wire primitives a message around the Struct needs (tags, varints, strings), so
// a caller frames its own message (a capture record, an upload request) in the same buffer.
import { measureStruct, utf8Length, type NestedSizes } from './size.js';

export class StructWriter {
  /** The next byte to write. */
  pos: number;
  /** The next nested size to take from `sizes`. */
  private next = 0;

  constructor(
    readonly buf: Buffer,
    start: number,
    /** From structSize / measureStruct on the same objects, in the same order. */
    private readonly sizes: NestedSizes,
  ) {
    this.pos = start;
  }

  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  /** A varint of a whole number, not negative, up to 2^53 (no 32-bit operators, which would wrap). */
  varint(n: number): void {
    if (n < 0x80000000) {
      // The common case (every length, seconds until 2038) in 32-bit operations.
      while (n >= 0x80) {
        this.buf[this.pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      this.buf[this.pos++] = n;
      return;
    }
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  /** Bytes as they are (an encoded message, or the content of a bytes field after its length). */
  raw(bytes: Uint8Array): void {
    this.buf.set(bytes, this.pos);
    this.pos += bytes.byteLength;
  }

  /** A string's length and UTF-8 bytes. */
  string(s: string): void {
    const bytes = utf8Length(s);
    this.varint(bytes);
    if (bytes === s.length && bytes <= 64) {
      // ASCII: one byte per unit, written here rather than through Buffer.write's C++ call.
      for (let i = 0; i < bytes; i++) this.buf[this.pos++] = s.charCodeAt(i);
    } else this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A Value's content. Only what the size calculator accepted reaches here. */
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

  /** A Struct's content (its entries, without its own tag and length). */
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
}

/** A Struct message on its own: Struct.encode(object).finish(), as a Buffer. */
export function encodeStruct(object: Record<string, unknown>): Buffer {
  const sizes: NestedSizes = [];
  const bytes = measureStruct(object, sizes);
  const buf = Buffer.allocUnsafe(bytes);
  const out = new StructWriter(buf, 0, sizes);
  out.struct(object);
  if (out.pos !== bytes) throw new Error(`struct-wire: wrote ${out.pos} bytes of ${bytes}`);
  return buf;
}
