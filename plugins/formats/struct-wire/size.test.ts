// The size calculator agrees with the generated ts-proto encoder's output length on every case, records
// the nested sizes the writer needs, and refuses what a Struct cannot hold, naming where it is.
import test from 'ava';
import { Struct } from '../../../gen/google/protobuf/struct.js';
import { measureStruct, UnsupportedValueError, utf8Length, varintSize, type NestedSizes } from './size.js';
import { cases } from './test-cases.js';

for (const [name, object] of cases) {
  test(`the measured size is the generated encoding's length: ${name}`, (t) => {
    const sizes: NestedSizes = [];
    t.is(measureStruct(object, sizes), Struct.encode(Struct.wrap(object)).finish().byteLength);
  });
}

test('nested sizes of several Structs are appended to one array, in order', (t) => {
  const sizes: NestedSizes = [];
  measureStruct({ a: { b: 1 } }, sizes);
  const first = sizes.length;
  measureStruct({ c: [1, 2] }, sizes);
  t.true(first > 0);
  t.true(sizes.length > first);
  t.deepEqual(
    sizes.slice(0, first),
    (() => {
      const alone: NestedSizes = [];
      measureStruct({ a: { b: 1 } }, alone);
      return alone;
    })(),
  );
});

test('varint sizes at each boundary, up to 2^53', (t) => {
  for (const [n, size] of [
    [0, 1],
    [127, 1],
    [128, 2],
    [16_383, 2],
    [16_384, 3],
    [2 ** 28 - 1, 4],
    [2 ** 28, 5],
    [2 ** 35 - 1, 5],
    [2 ** 35, 6],
    [2 ** 42 - 1, 6],
    [2 ** 42, 7],
    [2 ** 49 - 1, 7],
    [2 ** 49, 8],
    [2 ** 53, 8],
  ]) {
    t.is(varintSize(n), size, `varint of ${n}`);
  }
});

test('UTF-8 lengths are Buffer.byteLength, short strings counted in JS included', (t) => {
  for (const s of ['', 'ascii', 'é', '\u07ff\u0800', '☀️', '🤖', '\ud83e', '\udd16', 'a\ud83ex', 'x'.repeat(65), 'é'.repeat(64), '🤖'.repeat(40)]) {
    t.is(utf8Length(s), Buffer.byteLength(s), JSON.stringify(s));
  }
});

test('a bigint, function or symbol is an error naming its type and its path, as ts-proto words it', (t) => {
  const bad: [Record<string, unknown>, string, string][] = [
    [{ readings: { n: 10n } }, 'bigint', 'readings.n'],
    [{ list: [1, [2, () => 3]] }, 'function', 'list[1][1]'],
    [{ a: { b: [{ c: Symbol('s') }] } }, 'symbol', 'a.b[0].c'],
    [{ skipped: undefined, top: 1n }, 'bigint', 'top'],
  ];
  for (const [object, type, path] of bad) {
    const err = t.throws(() => measureStruct(object, []), { instanceOf: UnsupportedValueError, message: `Unsupported any value type: ${type}` });
    t.is(err?.path, path);
    t.is(err?.valueType, type);
    t.throws(() => Struct.encode(Struct.wrap(object)), { message: `Unsupported any value type: ${type}` }, 'the generated encoder says the same');
  }
});
