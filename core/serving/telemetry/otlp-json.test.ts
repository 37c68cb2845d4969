// The OTLP JSON body, written as text (otlp-json.ts): it must be the ExportTraceServiceRequest a collector
// parses, whatever the strings hold (quotes, newlines, line separators), with every field of a span:
// parent, trace state, kind, times, attributes of each type (null dropped), events, links and status. A
// frozen attributes object's JSON is kept: a later span with the same object gets the same attributes.
import test from 'ava';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { otlpTraceBody } from './otlp-json.js';
import { startTracing } from './tracing.js';

interface OtlpBody {
  resourceSpans: {
    resource: { attributes: { key: string; value: Record<string, unknown> }[] };
    scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[];
  }[];
}

test.serial('the body is OTLP JSON: strings escaped, every field of a span written, attribute types kept', async (t) => {
  const ended: ReadableSpan[] = [];
  const collect: SpanExporter = {
    export: (spans, done) => {
      ended.push(...spans);
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
  const tracing = await startTracing({ serviceName: 'svc "one"\n', exporters: [collect], asyncContext: false });
  t.teardown(() => tracing.shutdown());
  const { api, tracer } = tracing;
  const methodAttributes = Object.freeze({ 'rpc.system': 'grpc', 'rpc.method': 'Get"Readings' });
  const remote = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: 'a'.repeat(32),
    spanId: 'b'.repeat(16),
    traceFlags: 1,
    isRemote: true,
    traceState: api.createTraceState('vendor=x'),
  });
  const server = tracer.startSpan('pkg.Service/Get\u2028"Readings"', { kind: 1, attributes: methodAttributes }, remote);
  server.setAttribute('rpc.grpc.status_code', 5);
  server.setStatus({ code: 2, message: 'NOT_FOUND: no "thermo"\nat all' });
  const child = tracer.startSpan(
    'driver',
    { attributes: { s: 'x\\y', i: 7, d: 0.5, b: false, list: ['a', 'b'], gone: undefined } },
    api.trace.setSpan(remote, server),
  );
  child.addEvent('retry', { attempt: 2 });
  child.addLink({ context: server.spanContext(), attributes: { why: 'follows' } }); // a span started without links
  child.end();
  server.end();
  const again = tracer.startSpan('again', { attributes: methodAttributes }); // the frozen object's kept JSON
  again.end();

  const body = JSON.parse(otlpTraceBody(ended)) as OtlpBody;
  t.is(body.resourceSpans.length, 1);
  const [resource] = body.resourceSpans;
  t.deepEqual(resource.resource.attributes, [{ key: 'service.name', value: { stringValue: 'svc "one"\n' } }]);
  t.is(resource.scopeSpans[0].scope.name, 'platform');
  const [driver, call, later] = resource.scopeSpans[0].spans;
  t.like(call, {
    traceId: 'a'.repeat(32),
    parentSpanId: 'b'.repeat(16),
    traceState: 'vendor=x',
    flags: 1,
    name: 'pkg.Service/Get\u2028"Readings"',
    kind: 2,
    status: { code: 2, message: 'NOT_FOUND: no "thermo"\nat all' },
    events: [],
    links: [],
  });
  t.deepEqual(call.attributes, [
    { key: 'rpc.system', value: { stringValue: 'grpc' } },
    { key: 'rpc.method', value: { stringValue: 'Get"Readings' } },
    { key: 'rpc.grpc.status_code', value: { intValue: 5 } },
  ]);
  t.regex(call.startTimeUnixNano as string, /^\d{19}$/);
  t.true(BigInt(call.endTimeUnixNano as string) >= BigInt(call.startTimeUnixNano as string));
  t.like(driver, { parentSpanId: call.spanId, traceId: 'a'.repeat(32), kind: 1, status: { code: 0 } });
  t.deepEqual(driver.attributes, [
    { key: 's', value: { stringValue: 'x\\y' } },
    { key: 'i', value: { intValue: 7 } },
    { key: 'd', value: { doubleValue: 0.5 } },
    { key: 'b', value: { boolValue: false } },
    { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } } },
  ]);
  t.like((driver.events as Record<string, unknown>[])[0], { name: 'retry', attributes: [{ key: 'attempt', value: { intValue: 2 } }] });
  t.deepEqual(driver.links, [{ traceId: 'a'.repeat(32), spanId: call.spanId, attributes: [{ key: 'why', value: { stringValue: 'follows' } }] }]);
  t.deepEqual(later.attributes, [
    { key: 'rpc.system', value: { stringValue: 'grpc' } },
    { key: 'rpc.method', value: { stringValue: 'Get"Readings' } },
  ]);
  t.is(later.parentSpanId, undefined);
});
