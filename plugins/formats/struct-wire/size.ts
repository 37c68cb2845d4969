// The size calculator: how many bytes a google.protobuf.Struct, Value or ListValue takes on the wire,
// computed straight from a plain object. The writer (writer.ts) writes each nested message's length
// before its content, so the sizes of the nested messages are recorded here, in the order the writer
// meets them (pre-order), and the writer then writes the whole message once into a buffer of the right
// size: no fork per nested message and no copy at the end, as the generated BinaryWriter does.
//
// Wire format (struct.proto): Struct{1: map<string, Value>}, a map entry being {1 key, 2 value};
// Value{1 null_value, 2 number_value, 3 string_value, 4 bool_value, 5 struct_value, 6 list_value};
// ListValue{1: repeated Value}.
//
// The rules are ts-proto's (Struct.wrap / Value.wrap), so the bytes are the generated encoder's: an
// object's own enumerable keys in Object.keys order, a key whose value is undefined left out, an
// undefined list item an empty Value, an empty key not written (proto3 default), and a value of any
// other type (bigint, function, symbol) an UnsupportedValueError naming its path.

/** The sizes of nested messages, pre-order, for StructWriter. */
export type NestedSizes = number[];

/** A value a Struct cannot hold. The message is ts-proto's, so the client's error stays the generated one's. */
export class UnsupportedValueError extends Error {
  constructor(
    /** typeof the value: bigint, function or symbol. */
    readonly valueType: string,
    /** Where it is, from the Struct's top: `readings.n`, `list[2]`. */
    readonly path: string,
  ) {
    super(`Unsupported any value type: ${valueType}`);
    this.name = 'UnsupportedValueError';
  }
}

/** Bytes of a varint holding `n` (a whole number, not negative, up to 2^53). */
export function varintSize(n: number): number {
  // Comparisons, not a loop of divisions: this runs for every length and every Timestamp field.
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  if (n < 2 ** 35) return 5;
  if (n < 2 ** 42) return 6;
  if (n < 2 ** 49) return 7;
  return 8; // up to 2^56, more than a safe integer holds
}

/**
 * UTF-8 bytes of a string. Short strings (keys, most values) are counted here: crossing into C++ for
 * Buffer.byteLength costs more than the count. A lone surrogate is 3 bytes (written as U+FFFD).
 */
export function utf8Length(s: string): number {
  const n = s.length;
  if (n > 64) return Buffer.byteLength(s);
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: 4 bytes for 2 UTF-16 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Bytes of a length-delimited field (one-byte tag) whose content is `inner` bytes. */
export const fieldSize = (inner: number): number => 1 + varintSize(inner) + inner;

/** Thrown inside the hot loop without a path; measureStruct finds the path once, on the way out. */
class Unsupported extends Error {}

/** Bytes of a Value's content (its fields, not its own tag and length). */
export function valueSize(value: unknown, sizes: NestedSizes): number {
  if (value === null) return 2; // null_value = 0: tag + varint
  switch (typeof value) {
    case 'boolean':
      return 2;
    case 'number':
      return 9;
    case 'string': {
      const n = utf8Length(value);
      return 1 + varintSize(n) + n;
    }
    case 'undefined':
      return 0;
    case 'object': {
      const slot = sizes.push(0) - 1;
      const inner = Array.isArray(value) ? listSize(value, sizes) : structSize(value as Record<string, unknown>, sizes);
      sizes[slot] = inner;
      return fieldSize(inner);
    }
    default:
      throw new Unsupported(typeof value);
  }
}

/** Bytes of a ListValue's content. */
function listSize(list: unknown[], sizes: NestedSizes): number {
  let total = 0;
  for (const item of list) {
    const slot = sizes.push(0) - 1;
    const inner = valueSize(item, sizes);
    sizes[slot] = inner;
    total += fieldSize(inner);
  }
  return total;
}

/** Bytes of a Struct's content (its entries), recording nested sizes for the writer. */
export function structSize(object: Record<string, unknown>, sizes: NestedSizes): number {
  let total = 0;
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined) continue;
    const slot = sizes.push(0) - 1;
    const keyBytes = utf8Length(key);
    const valueSlot = sizes.push(0) - 1;
    const inner = valueSize(value, sizes);
    sizes[valueSlot] = inner;
    const entry = (keyBytes > 0 ? fieldSize(keyBytes) : 0) + fieldSize(inner);
    sizes[slot] = entry;
    total += fieldSize(entry);
  }
  return total;
}

/**
 * The bytes of a Struct's content, or an UnsupportedValueError naming the path of the first value it
 * cannot hold. Nested sizes are appended to `sizes`: several Structs of one message can share one array,
 * which one StructWriter then consumes in the same order.
 */
export function measureStruct(object: Record<string, unknown>, sizes: NestedSizes): number {
  try {
    return structSize(object, sizes);
  } catch (err) {
    if (err instanceof Unsupported) throw new UnsupportedValueError(err.message, unsupportedPath(object, '') ?? '');
    throw err;
  }
}

/** The path of the first value of `value` the size calculator refuses, in its order, or undefined. */
function unsupportedPath(value: unknown, path: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsupportedPath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  switch (typeof value) {
    case 'boolean':
    case 'number':
    case 'string':
      return undefined;
    case 'object':
      for (const key of Object.keys(value)) {
        const found = unsupportedPath((value as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return path;
  }
}
