// The fast column writers must write exactly what the generic path (textOf / binaryOf) writes, NULLs,
// long strings, fractional seconds, dates outside the fast range and huge int8 values included.
import test from 'ava';
import { DuckDBInstance, type DuckDBDataChunk, type DuckDBType } from '@duckdb/node-api';
import { oidOf } from './pg-types.js';
import { binaryOf, textOf } from './value-formats.js';
import { chunkWriters, fastWriter, writeShortDecimal } from './column-writers.js';
import { DataRowBatch } from './wire-messages.js';

const SQL = `SELECT
    CASE WHEN i % 7 = 0 THEN NULL ELSE TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_microseconds(i * 1000003) END AS tstz,
    CASE WHEN i = 1 THEN TIMESTAMPTZ '1500-03-04 05:06:07.000008+00' WHEN i = 2 THEN TIMESTAMPTZ '9999-12-31 23:59:59.999999+00'
         WHEN i = 3 THEN TIMESTAMPTZ '1969-12-31 23:59:59.5+00' WHEN i = 4 THEN 'infinity'::TIMESTAMPTZ
         ELSE TIMESTAMPTZ '1970-01-01 00:00:00+00' + to_seconds(i * 86399) END AS tstz2,
    TIMESTAMP '2000-01-01 00:00:00' - to_microseconds(i * 777777) AS ts,
    CASE WHEN i % 5 = 0 THEN NULL ELSE 'robot-' || i END AS short_text,
    'a longer text than twelve bytes, ü ' || i AS long_text,
    CASE WHEN i % 3 = 0 THEN NULL ELSE json_object('i', i, 's', 'x' || i) END AS j,
    CASE i % 6 WHEN 0 THEN 'NaN'::DOUBLE WHEN 1 THEN 'Infinity'::DOUBLE WHEN 2 THEN '-Infinity'::DOUBLE WHEN 3 THEN NULL ELSE i / 7.0 END AS d,
    (i * 1e18)::DOUBLE AS big_d,
    ((i % 400) / 10.0)::DOUBLE AS reading, (-(i % 997) * 0.001)::DOUBLE AS neg_d, (i * 1e-7)::DOUBLE AS tiny_d,
    CASE WHEN i % 4 = 0 THEN NULL ELSE (i - 1500)::INTEGER END AS i4,
    (i % 300 - 150)::SMALLINT AS i2,
    CASE WHEN i % 2 = 0 THEN (9007199254740993 + i * 1000000007)::BIGINT ELSE -i::BIGINT END AS i8,
    CASE WHEN i % 9 = 0 THEN NULL ELSE i % 2 = 0 END AS b
  FROM range(3000) t(i)`;

function reference(chunk: DuckDBDataChunk, types: DuckDBType[], oids: number[], format: number): Buffer {
  const batch = new DataRowBatch();
  const values = types.map((_t, c) => chunk.getColumnValues(c));
  for (let r = 0; r < chunk.rowCount; r++) {
    batch.beginRow(types.length);
    for (let c = 0; c < types.length; c++) {
      const v = values[c][r];
      if (v === null) batch.nullValue();
      else if (format === 1) batch.bytes(binaryOf(v, types[c], oids[c]));
      else batch.text(textOf(v, types[c]));
    }
    batch.endRow();
  }
  return batch.take();
}

for (const format of [0, 1]) {
  test(`fast writers match the generic encoding byte for byte (${format ? 'binary' : 'text'} format)`, async (t) => {
    const inst = await DuckDBInstance.create(':memory:');
    const conn = await inst.connect();
    try {
      const result = await conn.stream(SQL);
      const types = result.columnTypes();
      const oids = types.map(oidOf);
      const formats = types.map(() => format);
      let rows = 0;
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        // Every column of this query has a fast writer, so the comparison is not the generic path against itself.
        types.forEach((type, c) => t.truthy(fastWriter(chunk.getColumnVector(c), type, oids[c], format), `column ${c} takes the fast path`));
        const writers = chunkWriters(chunk, types, oids, formats);
        const batch = new DataRowBatch();
        for (let r = 0; r < chunk.rowCount; r++) {
          batch.beginRow(types.length);
          for (const w of writers) w(batch, r);
          batch.endRow();
        }
        t.deepEqual(batch.take(), reference(chunk, types, oids, format));
        rows += chunk.rowCount;
      }
      t.is(rows, 3000);
    } finally {
      conn.closeSync();
      inst.closeSync();
    }
  });
}

test('short decimals are written exactly as String() prints them, and the rest is left to String()', (t) => {
  const values = [21.5, -21.5, 0.1, 0.05, 1e-6, 0.000001234, 300, 123456789012345, 999999999999999, 0.1 + 0.2, 1 / 3, 2 ** 52, 1e15, 9.5e-7, 0, -0];
  // Sensor-like readings, and random doubles of every magnitude and precision.
  for (let i = 0; i < 20000; i++) values.push(Math.round(Math.random() * 10 ** (i % 12)) / 10 ** (i % 7), (Math.random() - 0.5) * 10 ** ((i % 40) - 20));
  let written = 0;
  for (const v of values) {
    const fast = new DataRowBatch();
    fast.beginRow(1);
    const done = writeShortDecimal(fast, v);
    if (!done) continue;
    written++;
    fast.endRow();
    const reference = new DataRowBatch();
    reference.beginRow(1);
    reference.asciiField(String(v));
    reference.endRow();
    t.deepEqual(fast.take(), reference.take(), `${v}`);
  }
  // Most of the sensor-like values take the fast path; 16-17 digit and exponent-notation ones never do.
  t.true(written > 15000, `${written} written`);
  for (const v of [1 / 3, 0.1 + 0.2, 1e15, 9.5e-7, 0, -0, NaN, Infinity]) t.false(writeShortDecimal(new DataRowBatch(), v), `${v}`);
});
