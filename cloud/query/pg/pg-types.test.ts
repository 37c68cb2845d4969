// Text and binary encodings of result values and decoding of Bind parameters, against PostgreSQL's own forms.
import test from 'ava';
import { DuckDBInstance, listValue, type DuckDBValue, type DuckDBType } from '@duckdb/node-api';
import { StatusError } from '../../../core/serving/status-error.js';
import { Oid, oidOf } from './pg-types.js';
import { decodeParameter } from './parameter-decoding.js';
import { binaryOf, textOf } from './value-formats.js';

async function values(sql: string): Promise<{ v: DuckDBValue; type: DuckDBType; oid: number }[]> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    const r = await conn.runAndReadAll(sql);
    const types = r.columnTypes();
    return r.getRows()[0].map((v, i) => ({ v, type: types[i], oid: oidOf(types[i]) }));
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

test("OIDs and text forms are PostgreSQL's", async (t) => {
  const cols = await values(`SELECT true, 7::SMALLINT, 7::INTEGER, 9007199254740993::BIGINT, 123.450::DECIMAL(10,3), 1.1::FLOAT, 0.1::DOUBLE,
    'NaN'::DOUBLE, 'x'::VARCHAR, '\\xDE\\xAD'::BLOB, DATE '2026-02-03', TIMESTAMP '2026-01-01 01:02:03.5',
    TIMESTAMPTZ '2026-01-01 00:00:00.000120+00', INTERVAL '1 year 2 months 3 days 04:05:06.7', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID,
    '{"a":[1,2]}'::JSON, ['a', NULL, 'b c', ''], [1, 2], {'k': 1}, 18446744073709551614::UHUGEINT`);
  t.deepEqual(
    cols.map((c) => c.oid),
    [
      Oid.bool,
      Oid.int2,
      Oid.int4,
      Oid.int8,
      Oid.numeric,
      Oid.float4,
      Oid.float8,
      Oid.float8,
      Oid.text,
      Oid.bytea,
      Oid.date,
      Oid.timestamp,
      Oid.timestamptz,
      Oid.interval,
      Oid.uuid,
      Oid.jsonb,
      Oid.textArray,
      Oid.int4Array,
      Oid.jsonb,
      Oid.numeric,
    ],
  );
  t.deepEqual(
    cols.map((c) => textOf(c.v, c.type)),
    [
      't',
      '7',
      '7',
      '9007199254740993',
      '123.450',
      '1.1',
      '0.1',
      'NaN',
      'x',
      '\\xdead',
      '2026-02-03',
      '2026-01-01 01:02:03.5',
      '2026-01-01 00:00:00.00012+00',
      '1 year 2 mons 3 days 04:05:06.7',
      '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
      '{"a":[1,2]}',
      '{a,NULL,"b c",""}',
      '{1,2}',
      '{"k":1}',
      '18446744073709551614',
    ],
  );
});

test('binary forms: integers, floats, timestamps from 2000-01-01, numeric in base 10000, arrays', async (t) => {
  const cols = await values(`SELECT 9007199254740993::BIGINT, 0.5::DOUBLE, TIMESTAMPTZ '2000-01-01 00:00:01+00', DATE '2000-01-02',
    -12345.678::DECIMAL(10,3), [1, NULL]::INTEGER[], '{"a":1}'::JSON`);
  const bin = cols.map((c) => binaryOf(c.v, c.type, c.oid).toString('hex'));
  t.is(bin[0], '0020000000000001');
  t.is(bin[1], '3fe0000000000000');
  t.is(bin[2], '00000000000f4240');
  t.is(bin[3], '00000001');
  // ndigits 3, weight 1, negative, dscale 3: 1 2345 6780
  t.is(bin[4], '000300014000000300010929' + '1a7c');
  t.is(bin[5], '00000001' + '00000001' + '00000017' + '00000002' + '00000001' + '00000004' + '00000001' + 'ffffffff');
  t.is(bin[6], `01${Buffer.from('{"a":1}').toString('hex')}`);
});

test('parameters: text by declared type, binary by type, and bad values name the parameter and the rule', (t) => {
  t.deepEqual(decodeParameter(Buffer.from('42'), Oid.int8, false, 0).value, 42n);
  t.is(decodeParameter(Buffer.from('t'), Oid.bool, false, 0).value, true);
  t.is(decodeParameter(Buffer.from('anything'), 0, false, 0).value, 'anything');
  t.is(decodeParameter(null, Oid.int4, false, 0).value, null);
  const i4 = Buffer.alloc(4);
  i4.writeInt32BE(-5);
  t.is(decodeParameter(i4, Oid.int4, true, 0).value, -5);
  const f8 = Buffer.alloc(8);
  f8.writeDoubleBE(2.5);
  t.is(decodeParameter(f8, Oid.float8, true, 0).value, 2.5);
  const err = t.throws(() => decodeParameter(Buffer.from('12x'), Oid.int4, false, 2), { instanceOf: StatusError });
  t.is(err!.message, 'parameter $3: "12x" is not an integer');
  const short = t.throws(() => decodeParameter(Buffer.alloc(3), Oid.int8, true, 0), { instanceOf: StatusError });
  t.is(short!.message, 'parameter $1: binary value must be 8 bytes, got 3');
  const unknown = t.throws(() => decodeParameter(Buffer.alloc(3), 600, true, 0), { instanceOf: StatusError });
  t.regex(unknown!.message, /binary format for type OID 600 is not supported; send it as text/);
});

test('array parameters: text[] and int8[] in text and binary form bind as lists; bad ones name the rule', (t) => {
  t.deepEqual(decodeParameter(Buffer.from('{a,"b c",NULL,"x\\"y",""}'), Oid.textArray, false, 0).value, listValue(['a', 'b c', null, 'x"y', '']));
  t.deepEqual(decodeParameter(Buffer.from('{1, -2,NULL}'), Oid.int8Array, false, 0).value, listValue([1n, -2n, null]));
  t.deepEqual(decodeParameter(Buffer.from('{}'), Oid.int8Array, false, 0).value, listValue([]));
  // array_send: ndim 1, has nulls, element oid, length 3, lower bound 1, then (length, bytes) per element.
  const head = Buffer.alloc(20);
  head.writeInt32BE(1, 0);
  head.writeInt32BE(1, 4);
  head.writeInt32BE(Oid.int8, 8);
  head.writeInt32BE(3, 12);
  head.writeInt32BE(1, 16);
  const el = (n: bigint) => {
    const b = Buffer.alloc(12);
    b.writeInt32BE(8, 0);
    b.writeBigInt64BE(n, 4);
    return b;
  };
  const nul = Buffer.alloc(4);
  nul.writeInt32BE(-1);
  t.deepEqual(
    decodeParameter(Buffer.concat([head, el(9007199254740993n), nul, el(-1n)]), Oid.int8Array, true, 0).value,
    listValue([9007199254740993n, null, -1n]),
  );
  const textHead = Buffer.from(head);
  textHead.writeInt32BE(0, 4);
  textHead.writeInt32BE(Oid.text, 8);
  textHead.writeInt32BE(1, 12);
  const word = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from('abc')]);
  t.deepEqual(decodeParameter(Buffer.concat([textHead, word]), Oid.textArray, true, 0).value, listValue(['abc']));
  t.is(t.throws(() => decodeParameter(Buffer.from('{1,x}'), Oid.int8Array, false, 1))!.message, 'parameter $2: "x" is not an integer');
  t.regex(t.throws(() => decodeParameter(Buffer.from('1,2'), Oid.int8Array, false, 0))!.message, /parameter \$1: "1,2" is not an array/);
  t.regex(t.throws(() => decodeParameter(Buffer.from('{{1},{2}}'), Oid.int8Array, false, 0))!.message, /one-dimensional/);
  t.regex(t.throws(() => decodeParameter(Buffer.concat([head, el(1n)]), Oid.int8Array, true, 0))!.message, /binary array ends before element 2 of 3/);
});
