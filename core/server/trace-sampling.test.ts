// The machine config's `tracing.sample_ratio` on the real runtime: at 0 a call that starts its own trace
// is not recorded, while a call whose caller sent a sampled `traceparent` is (with its driver span), at
// the OTLP receiver; /metrics counts the spans exported. A ratio outside 0..1 is a config error naming
// the field.
import test from 'ava';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { tracingClientInterceptor } from '../serving/telemetry/grpc-tracing.js';
import { startOtlpReceiver } from '../serving/telemetry/testing/otlp-receiver.js';
import { parsePrometheusText, sampleValue } from '../serving/telemetry/testing/prom-text.js';
import { startTracing } from '../serving/telemetry/tracing.js';
import { webUrlOf } from '../serving/testing/chromium.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];
const GET_READINGS = 'platform.component.sensor.v1.SensorService/GetReadings';

test('sample_ratio 0: own traces are not recorded, a sampled caller is followed; /metrics counts the exported spans', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const runtime = await spawnRuntime({ components, tracing: { enabled: true, otlp_endpoint: receiver.url, sample_ratio: 0 } });
  t.teardown(() => runtime.stop());
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'test-client', exporters: [memory] });
  t.teardown(() => tracing.shutdown());
  const plain = new SensorServiceClient(runtime.address, insecure());
  const traced = new SensorServiceClient(runtime.address, insecure(), { interceptors: [tracingClientInterceptor(tracing)] });
  t.teardown(() => (plain.close(), traced.close()));

  await call(plain, 'getReadings', { name: 'thermo' }); // no traceparent: a root, at ratio 0 not recorded
  await call(traced, 'getReadings', { name: 'thermo' });
  const [client] = memory.getFinishedSpans();
  const server = await eventually(
    () => receiver.spans.find((s) => s.name === GET_READINGS),
    (found) => found !== undefined,
  );
  t.is(server?.parentSpanId, client.spanContext().spanId, "the recorded call is the traced caller's");
  t.is(server?.traceId, client.spanContext().traceId);
  const driver = await eventually(
    () => receiver.spans.find((s) => s.name === 'driver thermo.getReadings'),
    (found) => found !== undefined,
  );
  t.is(driver?.parentSpanId, server?.spanId);
  // Spans leave in the order they ended, so the untraced call's span would have come first.
  t.is(receiver.spans.filter((s) => s.name === GET_READINGS).length, 1, 'the untraced call left no span');
  t.false(
    receiver.spans.some((s) => s.name === 'reconfigure'),
    'the start reconfiguration is a root too: not recorded',
  );

  const metrics = await eventually(
    async () => parsePrometheusText(await (await fetch(new URL('/metrics', webUrlOf(runtime.output())))).text()),
    (families) => sampleValue(families, 'platform_trace_spans_total', { outcome: 'exported' }) >= 2,
  );
  t.is(metrics.get('platform_trace_spans_total')?.type, 'counter');
  t.is(sampleValue(metrics, 'platform_trace_spans_total', { outcome: 'dropped' }), 0);
});

test('a sample_ratio outside 0..1 is a config error naming the field', async (t) => {
  const err = await t.throwsAsync(spawnRuntime({ components, tracing: { enabled: true, sample_ratio: 1.5 } }, { timeoutMs: 60_000 }));
  t.regex(err?.message ?? '', /tracing\.sample_ratio.*must be at most 1/);
});
