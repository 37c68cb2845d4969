// Results leave the query engine only when they encode to BSON exactly (result-size.ts): no document
// over BSON's 16 MiB limit (the bson package would truncate it without a word), no result over the byte
// limit, and the byte limit itself no higher than gRPC's 64 MiB message. Checked for SQL in the cloud
// process, and for MQL in the evaluator child, before the documents reach the cloud process.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { calculateObjectSize, deserialize, serialize } from 'bson';
import { StatusError } from '../../core/serving/status-error.js';
import { MingoPool } from './mql/mingo-pool.js';
import { documentSize, MAX_DOCUMENT_BYTES, MAX_RESULT_BYTES_CAP, resultBytesFromEnv } from './result-size.js';
import { DEFAULT_QUERY_LIMITS } from './sql/limits.js';
import { SqlSandbox } from './sql/sql-sandbox.js';
import { createTabularFixture, type TabularFixture } from './testing/tabular-fixture.js';

let fx: TabularFixture;
test.before(async () => {
  fx = await createTabularFixture();
});
test.after.always(() => fx.close());

const sandboxWith = (maxBytes: number) => new SqlSandbox(fx.connect, { ...DEFAULT_QUERY_LIMITS, timeoutMs: 120_000, maxBytes });

test('why: the bson package truncates a document over its buffer without an error', (t) => {
  const doc = { s: 'x'.repeat(20_000_000) };
  // If bson ever encodes this faithfully, the document limit is still BSON's own rule, but this reason is gone.
  t.true(serialize(doc).length < calculateObjectSize(doc));
  const err = t.throws(() => documentSize(doc, 'sql_query', 0), { instanceOf: StatusError });
  t.is(err.code, status.RESOURCE_EXHAUSTED);
  t.regex(err.message, /sql_query: result document 0 is 20000013 bytes, larger than BSON's 16777216-byte document limit/);
});

test('a SQL row over BSON 16 MiB document limit is RESOURCE_EXHAUSTED, even under a 64 MiB result limit', async (t) => {
  const err = await t.throwsAsync(sandboxWith(MAX_RESULT_BYTES_CAP).query('org-a', `SELECT string_agg('x', '') AS s FROM range(17000000)`), {
    instanceOf: StatusError,
  });
  t.is(err!.code, status.RESOURCE_EXHAUSTED);
  t.regex(err!.message, /larger than BSON's 16777216-byte document limit/);
});

test('every SQL result the engine accepts encodes to BSON exactly, within the byte limit', async (t) => {
  const maxBytes = 40 * 2 ** 20;
  const docs = await sandboxWith(maxBytes).query('org-a', `SELECT i, string_agg('y', '') AS s FROM range(3) r(i), range(8000000) c GROUP BY i ORDER BY i`);
  t.is(docs.length, 3);
  let total = 0;
  for (const doc of docs) {
    const bytes = serialize(doc);
    t.is(bytes.length, calculateObjectSize(doc));
    t.true(bytes.length <= MAX_DOCUMENT_BYTES);
    t.is((deserialize(bytes) as { s: string }).s.length, 8_000_000);
    total += bytes.length;
  }
  t.true(total <= maxBytes);
});

test('the MQL evaluator child refuses a result over the limits instead of sending it', async (t) => {
  const pool = new MingoPool({ processes: 1 });
  t.teardown(() => pool.close());
  const docs = Array.from({ length: 5 }, (_, i) => ({ i }));
  const stages = [{ $project: { i: 1, pad: { $reduce: { input: { $range: [0, 20] }, initialValue: 'x', in: { $concat: ['$$value', '$$value'] } } } } }];
  const signal = () => AbortSignal.timeout(120_000);
  // 5 documents of 2^20 characters each: each fits BSON, the whole does not fit 3 MiB.
  const over = await t.throwsAsync(pool.run({ docs, stages, resultLimits: { maxRows: 100, maxBytes: 3 * 2 ** 20 } }, signal()), { instanceOf: StatusError });
  t.is(over.code, status.RESOURCE_EXHAUSTED);
  t.regex(over.message, /^query: the result is larger than the 3145728-byte limit \(PLATFORM_QUERY_MAX_BYTES\)/);
  const rows = await t.throwsAsync(pool.run({ docs, stages: [{ $project: { i: 1 } }], resultLimits: { maxRows: 4, maxBytes: 1e6 } }, signal()), {
    instanceOf: StatusError,
  });
  t.regex(rows.message, /more than the 4-document limit/);
  const fine = await pool.run({ docs, stages: [{ $project: { _id: 0, i: 1 } }], resultLimits: { maxRows: 5, maxBytes: 1e6 } }, signal());
  t.deepEqual(fine, docs);
});

test('PLATFORM_QUERY_MAX_BYTES is refused above 64 MiB, the largest message the cloud sends', (t) => {
  t.is(resultBytesFromEnv({}), 4_000_000);
  t.is(resultBytesFromEnv({ PLATFORM_QUERY_MAX_BYTES: String(MAX_RESULT_BYTES_CAP) }), MAX_RESULT_BYTES_CAP);
  t.throws(() => resultBytesFromEnv({ PLATFORM_QUERY_MAX_BYTES: String(MAX_RESULT_BYTES_CAP + 1) }), { message: /must be at most 67108864/ });
});
