// Tracing on the real platform-cloud (--otlp-endpoint through OTEL_EXPORTER_OTLP_ENDPOINT): a data API
// call from a traced client gives a CLIENT span here and a SERVER span in the cloud with the same trace
// and the client span as parent, both with the status code; the cloud's spans reach an OTLP/HTTP
// receiver. A bad endpoint is refused at start naming the flag. Without an endpoint no OpenTelemetry
// module is loaded.
import test from 'ava';
import { Metadata } from '@grpc/grpc-js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { DataServiceClient } from '../../gen/platform/app/data/v1/data.js';
import { CloudConnection } from '../client/connection.js';
import { startTracing } from '../../core/serving/telemetry/tracing.js';
import { tracingClientInterceptor } from '../../core/serving/telemetry/grpc-tracing.js';
import { startOtlpReceiver } from '../../core/serving/telemetry/testing/otlp-receiver.js';
import { eventually } from '../../core/serving/testing/eventually.js';
import { spawnCloud } from '../testing/spawn-cloud.js';
import { startFixture } from '../testing/tenancy-fixture.js';

const MODULE_WATCH = fileURLToPath(new URL('../../core/serving/telemetry/testing/module-watch.mjs', import.meta.url));
const SQL = 'platform.app.data.v1.DataService/TabularDataBySQL';

test('a traced data API call: linked client and server spans with status codes, received over OTLP', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const fx = await startFixture({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  t.teardown(() => fx.close());
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'test-client', exporters: [memory] });
  t.teardown(() => tracing.shutdown());

  const connection = new CloudConnection({
    serviceHost: fx.cloud.address,
    credentials: { type: 'api-key', authEntity: fx.keys.ownerA.id, payload: fx.keys.ownerA.key },
  });
  t.teardown(() => connection.close());
  const data = new DataServiceClient(fx.cloud.address, connection.channel, { interceptors: [tracingClientInterceptor(tracing)] });
  t.teardown(() => data.close());
  const sql = (organizationId: string, md: Metadata) =>
    new Promise<unknown>((resolve, reject) =>
      data.tabularDataBySql({ organizationId, sqlQuery: 'SELECT 1 AS one' }, md, (err, res) => (err ? reject(err) : resolve(res))),
    );
  await sql(fx.orgA, await connection.metadata());
  await t.throwsAsync(sql(fx.orgB, await connection.metadata())); // another organization: PERMISSION_DENIED

  const clientSpans = memory.getFinishedSpans().filter((s) => s.name === SQL);
  t.is(clientSpans.length, 2);
  t.deepEqual(
    clientSpans.map((s) => s.attributes['rpc.grpc.status_code']),
    [0, 7],
  );
  t.is(clientSpans[1].status.code, 2, 'the refused call is an ERROR span');
  const serverSpans = await eventually(
    () => receiver.spans.filter((s) => s.service === 'platform-cloud' && s.name === SQL),
    (found) => found.length === 2,
  );
  for (const [i, client] of clientSpans.entries()) {
    const server = serverSpans.find((s) => s.parentSpanId === client.spanContext().spanId);
    t.truthy(server, `call ${i}: the server span's parent is the client span`);
    t.is(server?.traceId, client.spanContext().traceId);
    t.is(server?.kind, 2, 'SERVER (OTLP numbering)');
    t.is(server?.attributes['rpc.grpc.status_code'], i === 0 ? 0 : 7);
    t.is(server?.attributes['rpc.system'], 'grpc');
  }
  // The admitted query is a span inside the call's server span.
  const okServer = serverSpans.find((s) => s.parentSpanId === clientSpans[0].spanContext().spanId)!;
  const query = await eventually(
    () => receiver.spans.find((s) => s.name === 'sql query' && s.parentSpanId === okServer.spanId),
    (found) => found !== undefined,
  );
  t.is(query?.traceId, okServer.traceId);
  // The client's Authenticate went untraced (another client): its server span is a root.
  t.true(receiver.spans.some((s) => s.name === 'platform.rpc.v1.AuthService/Authenticate' && s.parentSpanId === undefined));
});

test('a bad --otlp-endpoint or --trace-sample-ratio is refused at start, naming the flag', async (t) => {
  const err = await t.throwsAsync(spawnCloud(undefined, ['--otlp-endpoint', 'collector:4318']));
  t.regex(err?.message ?? '', /--otlp-endpoint: OTLP endpoint "collector:4318": must be http:\/\/ or https:\/\//);
  const ratio = await t.throwsAsync(spawnCloud(undefined, ['--otlp-endpoint', 'http://127.0.0.1:1', '--trace-sample-ratio', '2']));
  t.regex(ratio?.message ?? '', /--trace-sample-ratio must be a number from 0 to 1, got "2"/);
});

test('without an OTLP endpoint the cloud loads no OpenTelemetry module; with one it does (the watch works)', async (t) => {
  const watch = join(mkdtempSync(join(tmpdir(), 'otel-watch-')), 'loaded.txt');
  const env = { NODE_OPTIONS: `--import=${MODULE_WATCH}`, MODULE_WATCH_FILE: watch, OTEL_EXPORTER_OTLP_ENDPOINT: '' };
  const fx = await startFixture(env);
  await fx.client(fx.keys.ownerA).dataClient.tabularDataBySQL(fx.orgA, 'SELECT 1 AS one');
  await fx.close();
  t.false(existsSync(watch), existsSync(watch) ? readFileSync(watch, 'utf8') : '');

  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const traced = await spawnCloud(undefined, ['--otlp-endpoint', receiver.url], env);
  await traced.stop();
  t.regex(readFileSync(watch, 'utf8'), /@opentelemetry\/api\//);
});
