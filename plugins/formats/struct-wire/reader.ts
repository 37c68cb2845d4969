// The reader: a google.protobuf.Struct read straight into a plain object, without the Value and
// FieldsEntry objects the generated decoder builds per field and then unwraps (about 1.4x the generated
// decoder's speed on upload requests, see `npm run bench:struct-wire`). The result is what
// Struct.unwrap(Struct.decode(bytes)) gives, except that a Value with no kind set reads as null (JSON
// has no undefined; ts-proto gives undefined, or drops the entry): a later field of a Value or a later
// entry of a key wins, unknown fields are skipped.
//
// A budget counts what is built (each entry and each Value, list items included), so a caller can
// refuse a request before it builds what it cannot afford: an empty Value is 2 bytes on the wire and an
// object of dozens of bytes in memory.
import { BinaryReader } from '@bufbuild/protobuf/wire';

export type Json = null | number | string | boolean | Json[] | { [key: string]: Json };

/** What a read may still build; `exceeded` is called (and must throw) when `left` goes below zero. */
export interface ValueBudget {
  left: number;
  exceeded(): never;
}

/** A budget that never runs out. */
export const unlimitedBudget = (): ValueBudget => ({
  left: Infinity,
  exceeded(): never {
    throw new Error('unreachable: an unlimited budget ran out');
  },
});

/** A Value's content, from `r.pos` to `end`. */
export function readValue(r: BinaryReader, end: number, budget: ValueBudget): Json {
  if (--budget.left < 0) budget.exceeded();
  let value: Json = null;
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        r.int32();
        value = null;
        break;
      case 2:
        value = r.double();
        break;
      case 3:
        value = r.string();
        break;
      case 4:
        value = r.bool();
        break;
      case 5:
        value = readStruct(r, r.uint32() + r.pos, budget);
        break;
      case 6: {
        const listEnd = r.uint32() + r.pos;
        const list: Json[] = [];
        while (r.pos < listEnd) {
          const t = r.uint32();
          if (t >>> 3 === 1) list.push(readValue(r, r.uint32() + r.pos, budget));
          else r.skip(t & 7);
        }
        value = list;
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return value;
}

/** A Struct's content, from `r.pos` to `end`, as a plain object. */
export function readStruct(r: BinaryReader, end: number, budget: ValueBudget): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 !== 1) {
      r.skip(tag & 7);
      continue;
    }
    if (--budget.left < 0) budget.exceeded();
    const entryEnd = r.uint32() + r.pos;
    let key = '';
    let value: Json = null;
    while (r.pos < entryEnd) {
      const t = r.uint32();
      if (t >>> 3 === 1) key = r.string();
      else if (t >>> 3 === 2) value = readValue(r, r.uint32() + r.pos, budget);
      else r.skip(t & 7);
    }
    setOwn(out, key, value);
  }
  return out;
}

/**
 * `out[key] = value`, except that "__proto__" becomes an own key holding the data: assigning it would
 * set the object's prototype instead (the entry lost, the object inheriting the sender's values).
 */
function setOwn(out: { [key: string]: Json }, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, configurable: true, writable: true });
  else out[key] = value;
}

/** A Struct message on its own, as a plain object. */
export function decodeStruct(bytes: Uint8Array, budget: ValueBudget = unlimitedBudget()): { [key: string]: Json } {
  const r = new BinaryReader(bytes);
  return readStruct(r, r.len, budget);
}
