// The few PostgreSQL backend messages a simple-query result needs (protocol 3.0, text format).
import { BackendError } from 'pg-gateway';

class MessageWriter {
  private parts: Buffer[] = [];
  int16(n: number) { const b = Buffer.alloc(2); b.writeInt16BE(n); this.parts.push(b); return this; }
  int32(n: number) { const b = Buffer.alloc(4); b.writeInt32BE(n); this.parts.push(b); return this; }
  cstring(s: string) { this.parts.push(Buffer.from(s, 'utf8'), Buffer.from([0])); return this; }
  bytes(b: Buffer) { this.parts.push(b); return this; }
  message(code: string): Uint8Array {
    const body = Buffer.concat(this.parts);
    const head = Buffer.alloc(5);
    head.write(code, 0, 'ascii');
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  }
}

/** Type OIDs from pg_type, so clients align and parse columns sensibly. */
export const PgType = { bool: 16, int8: 20, text: 25, json: 114, float8: 701, timestamptz: 1184 } as const;

export function rowDescription(columns: readonly { name: string; typeOid: number }[]): Uint8Array {
  const w = new MessageWriter().int16(columns.length);
  for (const c of columns) w.cstring(c.name).int32(0).int16(0).int32(c.typeOid).int16(-1).int32(-1).int16(0);
  return w.message('T');
}

export function dataRow(values: readonly (string | null)[]): Uint8Array {
  const w = new MessageWriter().int16(values.length);
  for (const v of values) {
    if (v === null) w.int32(-1);
    else {
      const b = Buffer.from(v, 'utf8');
      w.int32(b.length).bytes(b);
    }
  }
  return w.message('D');
}

export const commandComplete = (tag: string) => new MessageWriter().cstring(tag).message('C');
export const emptyQueryResponse = () => new MessageWriter().message('I');
export const readyForQuery = () => new MessageWriter().bytes(Buffer.from('I')).message('Z');

export const errorResponse = (code: string, message: string, severity: 'ERROR' | 'FATAL' = 'ERROR') =>
  BackendError.create({ severity, code, message }).flush();
