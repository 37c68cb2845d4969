// The PostgreSQL backend messages the endpoint sends (protocol 3.0), and a reader for frontend message bodies.
import { BackendError } from 'pg-gateway';
import { ProtocolViolation } from '../../errors/catalogue.js';
export { ProtocolViolation };

class MessageWriter {
  private parts: Buffer[] = [];
  int16(n: number) {
    const b = Buffer.alloc(2);
    b.writeInt16BE(n);
    this.parts.push(b);
    return this;
  }
  int32(n: number) {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    this.parts.push(b);
    return this;
  }
  cstring(s: string) {
    this.parts.push(Buffer.from(s, 'utf8'), Buffer.from([0]));
    return this;
  }
  bytes(b: Buffer) {
    this.parts.push(b);
    return this;
  }
  message(code: string): Buffer {
    const body = Buffer.concat(this.parts);
    const head = Buffer.alloc(5);
    head.write(code, 0, 'ascii');
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  }
}

export interface ColumnDescription {
  name: string;
  typeOid: number;
  typeSize: number;
  /** 0 = text, 1 = binary. */
  format: number;
}

export function rowDescription(columns: readonly ColumnDescription[]): Buffer {
  const w = new MessageWriter().int16(columns.length);
  for (const c of columns) w.cstring(c.name).int32(0).int16(0).int32(c.typeOid).int16(c.typeSize).int32(-1).int16(c.format);
  return w.message('T');
}

/**
 * Data rows appended into one growing buffer, so a result goes out in a few large socket writes
 * rather than one allocation and one write per row.
 */
export class DataRowBatch {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  private rowStart = 0;

  get size(): number {
    return this.used;
  }

  private ensure(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  beginRow(columns: number): void {
    this.ensure(7);
    this.rowStart = this.used;
    this.buf[this.used] = 0x44; // 'D'
    this.used += 5;
    this.buf.writeInt16BE(columns, this.used);
    this.used += 2;
  }

  nullValue(): void {
    this.ensure(4);
    this.buf.writeInt32BE(-1, this.used);
    this.used += 4;
  }

  text(s: string): void {
    const max = s.length * 3;
    this.ensure(4 + max);
    const n = this.buf.write(s, this.used + 4, 'utf8');
    this.buf.writeInt32BE(n, this.used);
    this.used += 4 + n;
  }

  bytes(b: Buffer): void {
    this.ensure(4 + b.length);
    this.buf.writeInt32BE(b.length, this.used);
    b.copy(this.buf, this.used + 4);
    this.used += 4 + b.length;
  }

  /** A field of `len` bytes copied from `src` at `start`, after an optional prefix byte (jsonb's version). */
  rawField(src: Uint8Array, start: number, len: number, prefix = -1): void {
    const total = prefix >= 0 ? len + 1 : len;
    this.ensure(4 + total);
    const buf = this.buf;
    let at = this.used;
    buf.writeInt32BE(total, at);
    at += 4;
    if (prefix >= 0) buf[at++] = prefix;
    for (let i = 0; i < len; i++) buf[at + i] = src[start + i];
    this.used = at + len;
  }

  /** A UTF-8 field, after an optional prefix byte. */
  textField(s: string, prefix = -1): void {
    if (prefix < 0) return this.text(s);
    this.ensure(5 + s.length * 3);
    this.buf[this.used + 4] = prefix;
    const n = this.buf.write(s, this.used + 5, 'utf8');
    this.buf.writeInt32BE(n + 1, this.used);
    this.used += 5 + n;
  }

  /** A field known to be ASCII (numbers, t/f): one byte per character, no UTF-8 encoder. */
  asciiField(s: string): void {
    const n = s.length;
    this.ensure(4 + n);
    const buf = this.buf;
    buf.writeInt32BE(n, this.used);
    const at = this.used + 4;
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
    this.used = at + n;
  }

  /** A big-endian integer field of 1, 2 or 4 bytes. */
  intField(v: number, size: number): void {
    this.ensure(4 + size);
    this.buf.writeInt32BE(size, this.used);
    if (size === 1) this.buf.writeInt8(v, this.used + 4);
    else if (size === 2) this.buf.writeInt16BE(v, this.used + 4);
    else this.buf.writeInt32BE(v, this.used + 4);
    this.used += 4 + size;
  }

  /** An int8 field from its high and low 32-bit words. */
  int64Words(hi: number, lo: number): void {
    this.ensure(12);
    this.buf.writeInt32BE(8, this.used);
    this.buf.writeInt32BE(hi, this.used + 4);
    this.buf.writeInt32BE(lo, this.used + 8);
    this.used += 12;
  }

  /** An int8 field from a safe integer. */
  int64Field(n: number): void {
    const hi = Math.floor(n / 4294967296);
    this.int64Words(hi, (n - hi * 4294967296) | 0);
  }

  /** The decimal `[-]n / 10^k` in fixed notation (`0.05`, `21.5`, `300`), n a non-negative integer below 2^53. */
  decimalField(negative: boolean, n: number, k: number): void {
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    const whole = Math.max(digits - k, 1); // digits before the point, "0" when n < 10^k
    const len = (negative ? 1 : 0) + whole + (k > 0 ? 1 + k : 0);
    this.ensure(4 + len);
    const buf = this.buf;
    buf.writeInt32BE(len, this.used);
    const start = this.used + 4;
    if (negative) buf[start] = 0x2d;
    // Digits from the last one back; the point goes after the k fraction digits, zeros fill up to it.
    let at = start + len - 1;
    let x = n;
    for (let i = 0; i < k; i++) {
      const q = Math.floor(x / 10);
      buf[at--] = 0x30 + (x - q * 10);
      x = q;
    }
    if (k > 0) buf[at--] = 0x2e;
    do {
      const q = Math.floor(x / 10);
      buf[at--] = 0x30 + (x - q * 10);
      x = q;
    } while (x > 0);
    this.used = start + len;
  }

  float64Field(v: number): void {
    this.ensure(12);
    this.buf.writeInt32BE(8, this.used);
    this.buf.writeDoubleBE(v, this.used + 4);
    this.used += 12;
  }

  /** `date HH:MM:SS[.ffffff][+00]`, PostgreSQL's ISO form, written byte by byte (date is 10 ASCII characters). */
  timestampField(date: string, h: number, m: number, s: number, micros: number, tz: boolean): void {
    this.ensure(4 + 32);
    const buf = this.buf;
    const start = this.used + 4;
    let at = start;
    for (let i = 0; i < 10; i++) buf[at + i] = date.charCodeAt(i);
    at += 10;
    buf[at++] = 0x20;
    buf[at++] = 0x30 + ((h / 10) | 0);
    buf[at++] = 0x30 + (h % 10);
    buf[at++] = 0x3a;
    buf[at++] = 0x30 + ((m / 10) | 0);
    buf[at++] = 0x30 + (m % 10);
    buf[at++] = 0x3a;
    buf[at++] = 0x30 + ((s / 10) | 0);
    buf[at++] = 0x30 + (s % 10);
    if (micros > 0) {
      // Six digits, trailing zeros dropped, as PostgreSQL prints fractional seconds.
      buf[at++] = 0x2e;
      let div = 100000;
      let rest = micros;
      while (rest > 0) {
        const d = (rest / div) | 0;
        buf[at++] = 0x30 + d;
        rest -= d * div;
        div /= 10;
      }
    }
    if (tz) {
      buf[at++] = 0x2b;
      buf[at++] = 0x30;
      buf[at++] = 0x30;
    }
    buf.writeInt32BE(at - start, this.used);
    this.used = at;
  }

  endRow(): void {
    this.buf.writeInt32BE(this.used - this.rowStart - 1, this.rowStart + 1);
  }

  /** Hands out what was written and starts over. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.used));
    this.used = 0;
    return out;
  }
}

export const commandComplete = (tag: string) => new MessageWriter().cstring(tag).message('C');
export const emptyQueryResponse = () => new MessageWriter().message('I');
export const parseComplete = () => new MessageWriter().message('1');
export const bindComplete = () => new MessageWriter().message('2');
export const closeComplete = () => new MessageWriter().message('3');
export const noData = () => new MessageWriter().message('n');
export const portalSuspended = () => new MessageWriter().message('s');
export const parameterStatus = (name: string, value: string) => new MessageWriter().cstring(name).cstring(value).message('S');
export const backendKeyData = (pid: number, secret: number) => new MessageWriter().int32(pid).int32(secret).message('K');

export function parameterDescription(oids: readonly number[]): Buffer {
  const w = new MessageWriter().int16(oids.length);
  for (const o of oids) w.int32(o);
  return w.message('t');
}

/** ReadyForQuery with the transaction status: I idle, T in a transaction block, E in a failed one. */
export const readyForQuery = (status: 'I' | 'T' | 'E' = 'I') => new MessageWriter().bytes(Buffer.from(status)).message('Z');

export const errorResponse = (code: string, message: string, severity: 'ERROR' | 'FATAL' = 'ERROR') =>
  Buffer.from(BackendError.create({ severity, code, message }).flush());

/** NoticeResponse: the same fields as ErrorResponse under type 'N'. */
export const noticeResponse = (code: string, message: string) => {
  const e = Buffer.from(BackendError.create({ severity: 'ERROR', code, message }).flush());
  const body = e
    .subarray(5)
    .toString('latin1')
    .replace(/^SERROR\0VERROR\0/, 'SWARNING\0VWARNING\0');
  const out = Buffer.alloc(5 + Buffer.byteLength(body, 'latin1'));
  out.write('N', 0, 'ascii');
  out.writeInt32BE(out.length - 1, 1);
  out.write(body, 5, 'latin1');
  return out;
};

/** Reads a frontend message body (after the type byte and length). */

export class MessageReader {
  private offset = 0;
  constructor(private readonly buf: Buffer) {}
  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  /** A count (of parameters, formats, columns): PostgreSQL reads these 16 bits unsigned, so 65535 is 65535, not -1. */
  count16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  byte(): number {
    this.need(1);
    return this.buf[this.offset++];
  }
  cstring(): string {
    const end = this.buf.indexOf(0, this.offset);
    if (end < 0) throw new ProtocolViolation('a string is not NUL-terminated');
    const s = this.buf.toString('utf8', this.offset, end);
    this.offset = end + 1;
    return s;
  }
  bytes(n: number): Buffer {
    if (this.offset + n > this.buf.length) throw new ProtocolViolation('a value runs past the end of its message');
    const b = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return b;
  }
  private need(n: number): void {
    if (this.offset + n > this.buf.length) throw new ProtocolViolation('the message ends before its last field');
  }
}
