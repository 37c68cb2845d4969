// Tracing on the real platform-server (the machine config's `tracing` section): a traced GetReadings
// gives the test's CLIENT span, the runtime's SERVER span as its child and the driver call's span as the
// server span's child, with the status codes, all at an OTLP/HTTP receiver; the start's reconfiguration
// is a span too. -output-telemetry prints the spans on stderr. With tracing off, the runtime and its
// driver workers load no OpenTelemetry module; with it on, no async context manager (the call's span
// reaches the driver call explicitly).
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { tracingClientInterceptor } from '../serving/telemetry/grpc-tracing.js';
import { startOtlpReceiver } from '../serving/telemetry/testing/otlp-receiver.js';
import { startTracing } from '../serving/telemetry/tracing.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const MODULE_WATCH = fileURLToPath(new URL('../serving/telemetry/testing/module-watch.mjs', import.meta.url));
const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];
const GET_READINGS = 'platform.component.sensor.v1.SensorService/GetReadings';

test('a traced GetReadings: client, server and driver spans linked, with status codes, at the OTLP receiver', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const runtime = await spawnRuntime({ components, tracing: { enabled: true, otlp_endpoint: receiver.url } });
  t.teardown(() => runtime.stop());
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'test-client', exporters: [memory] });
  t.teardown(() => tracing.shutdown());
  const sensors = new SensorServiceClient(runtime.address, insecure(), { interceptors: [tracingClientInterceptor(tracing)] });
  t.teardown(() => sensors.close());

  await call(sensors, 'getReadings', { name: 'thermo' });
  await t.throwsAsync(call(sensors, 'getReadings', { name: 'nope' }));
  const clients = memory.getFinishedSpans().filter((s) => s.name === GET_READINGS);
  t.deepEqual(
    clients.map((s) => s.attributes['rpc.grpc.status_code']),
    [0, 5],
  );
  const spans = await eventually(
    () => receiver.spans.filter((s) => s.service === 'platform-server'),
    (found) => found.filter((s) => s.name === GET_READINGS).length === 2 && found.some((s) => s.name === 'driver thermo.getReadings'),
  );
  const servers = clients.map((c) => spans.find((s) => s.name === GET_READINGS && s.parentSpanId === c.spanContext().spanId));
  t.is(servers[0]?.traceId, clients[0].spanContext().traceId);
  t.is(servers[0]?.attributes['rpc.grpc.status_code'], 0);
  t.is(servers[1]?.attributes['rpc.grpc.status_code'], 5);
  t.is(servers[1]?.status.code, 2, 'NOT_FOUND is an ERROR span');
  const driver = spans.find((s) => s.name === 'driver thermo.getReadings');
  t.is(driver?.parentSpanId, servers[0]?.spanId, "the driver call is a child of the call's server span");
  t.is(driver?.traceId, clients[0].spanContext().traceId);
  t.true(
    spans.some((s) => s.name === 'reconfigure'),
    'the start applied the config in a span',
  );
});

test('-output-telemetry prints the spans on stderr when tracing is on', async (t) => {
  const runtime = await spawnRuntime({ components, tracing: { enabled: true } }, { args: ['-output-telemetry'] });
  t.teardown(() => runtime.stop());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  await call(sensors, 'getReadings', { name: 'thermo' });
  await eventually(
    () => runtime.output(),
    (out) => out.includes(`"name":"${GET_READINGS}"`),
  );
  const line = runtime
    .output()
    .split('\n')
    .find((l) => l.includes(`"name":"${GET_READINGS}"`))!;
  const span = JSON.parse(line) as { trace_id: string; service: string; attributes: Record<string, unknown> };
  t.regex(span.trace_id, /^[0-9a-f]{32}$/);
  t.is(span.service, 'platform-server');
  t.is(span.attributes['rpc.grpc.status_code'], 0);
});

test('a bad tracing section is a config error naming the field', async (t) => {
  const err = await t.throwsAsync(spawnRuntime({ components, tracing: { enabled: true, otlp_endpoint: 'collector:4318' } }, { timeoutMs: 60_000 }));
  t.regex(err?.message ?? '', /tracing\.otlp_endpoint.*http:\/\/ or https:\/\//);
});

test('with tracing off, the runtime and its driver workers load no OpenTelemetry module; on, they do, but no async context manager', async (t) => {
  const watch = join(mkdtempSync(join(tmpdir(), 'otel-watch-')), 'loaded.txt');
  const env = { NODE_OPTIONS: `--import=${MODULE_WATCH}`, MODULE_WATCH_FILE: watch };
  const off = await spawnRuntime({ components }, { env });
  const sensors = new SensorServiceClient(off.address, insecure());
  await call(sensors, 'getReadings', { name: 'thermo' });
  sensors.close();
  t.is(await off.stop(), 0);
  t.false(existsSync(watch), existsSync(watch) ? readFileSync(watch, 'utf8') : '');
  const on = await spawnRuntime({ components, tracing: { enabled: true, disk: true } }, { env: { ...env, PLATFORM_TRACE_DIR: join(watch, '..', 'traces') } });
  t.is(await on.stop(), 0);
  const loaded = readFileSync(watch, 'utf8');
  t.regex(loaded, /@opentelemetry\/api\//);
  // The call's span is passed to the driver call explicitly: an AsyncLocalStorage context manager would
  // cost every promise of the runtime an async hook (bench:telemetry).
  t.notRegex(loaded, /@opentelemetry\/context-async-hooks/);
});
