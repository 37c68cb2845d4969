// Spans of the PostgreSQL endpoint (pg-tracing.ts), received by a real OTLP/HTTP receiver: a simple query
// is a `pg Query` SERVER span with its `duckdb prepare` and `duckdb execute` children (same trace, parent
// links, rows returned); node-postgres's extended protocol gives `pg Parse` and `pg Execute` spans with
// their children (the Describe of a portal starts its result); a failing statement is an ERROR span carrying its SQLSTATE, and so is its child.
import test from 'ava';
import pg from 'pg';
import { startOtlpReceiver, type ReceivedSpan } from '../../../core/serving/telemetry/testing/otlp-receiver.js';
import { startTracing } from '../../../core/serving/telemetry/tracing.js';
import { PASSWORD_A, startTestEndpoint, USER_A } from './test-endpoint.js';

test.serial('statements are spans with their DuckDB work as children, at an OTLP receiver', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const tracing = await startTracing({ serviceName: 'platform-cloud', otlpEndpoint: receiver.url });
  t.teardown(() => tracing.shutdown());
  const te = await startTestEndpoint();
  t.teardown(() => te.close());
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  await client.connect();
  t.teardown(() => client.end().catch(() => undefined));

  await client.query("SELECT component_name FROM readings WHERE component_name = 'thermo'"); // simple protocol
  await client.query('SELECT count(*) AS n FROM readings WHERE component_name = $1', ['hygro']); // extended
  await t.throwsAsync(client.query('SELEC nonsense'));
  await tracing.forceFlush();
  const spans = receiver.spans;
  const childrenOf = (parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);

  const queries = spans.filter((s) => s.name === 'pg Query');
  t.is(queries.length, 2);
  const [ok, failed] = queries;
  t.is(ok.kind, 2, 'SERVER (OTLP numbering)');
  t.is(ok.parentSpanId, undefined, 'a statement starts its own trace');
  t.like(ok.attributes, { 'db.system': 'postgresql', 'db.namespace': 'sensorData', 'db.operation.name': 'SELECT' });
  t.is(ok.status.code ?? 0, 0);
  const okChildren = childrenOf(ok);
  t.deepEqual(okChildren.map((s) => s.name).sort(), ['duckdb execute', 'duckdb prepare']);
  for (const child of okChildren) t.is(child.traceId, ok.traceId);
  t.is(okChildren.find((s) => s.name === 'duckdb execute')?.attributes['db.response.returned_rows'], 2);

  const parse = spans.find((s) => s.name === 'pg Parse')!;
  const describe = spans.find((s) => s.name === 'pg Describe')!;
  const execute = spans.find((s) => s.name === 'pg Execute')!;
  t.deepEqual(
    childrenOf(parse).map((s) => s.name),
    ['duckdb prepare'],
  );
  // node-postgres describes the portal before executing it: the result starts there, then streams.
  t.deepEqual(
    childrenOf(describe).map((s) => s.name),
    ['duckdb execute'],
  );
  t.deepEqual(
    childrenOf(execute).map((s) => s.name),
    ['duckdb execute'],
  );
  t.is(childrenOf(execute)[0].attributes['db.response.returned_rows'], 1);
  t.not(parse.traceId, execute.traceId, 'each message is a trace of its own');

  t.is(failed.status.code, 2);
  t.is(failed.attributes['db.response.status_code'], '42601');
  t.regex(failed.status.message ?? '', /syntax error/);
  const failedPrepare = childrenOf(failed).find((s) => s.name === 'duckdb prepare');
  t.is(failedPrepare?.status.code, 2);
  t.is(failedPrepare?.attributes['db.response.status_code'], '42601');
});
