// The platform's tracer, sampler and export queue: parent-based ratio sampling (roots by the trace id,
// children by their parent, remote parents included), the bounded queue that drops and counts when its
// exporter falls behind, and spans reaching a real OTLP/HTTP receiver with their links, kinds and
// attribute types (and counted as failed when the receiver is not there).
import test from 'ava';
import { createServer } from 'node:net';
import { Metadata } from '@grpc/grpc-js';
import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { parentBasedRatio } from './lean-tracer.js';
import { SpanBatcher } from './span-batcher.js';
import { childSpan, endSpan, startTracing } from './tracing.js';
import { injectTraceContext } from './grpc-tracing.js';
import { startOtlpReceiver } from './testing/otlp-receiver.js';
import { eventually } from '../testing/eventually.js';

const hex8 = (n: number) => n.toString(16).padStart(8, '0');
const parent = (sampled: boolean) => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: sampled ? 1 : 0 });

test('parent-based ratio: a root by its trace id, a child by its parent', (t) => {
  const quarter = parentBasedRatio(0.25);
  // The decision reads the trace id's last 8 hex digits: below a quarter of 2^32 is recorded.
  t.true(quarter(`${'f'.repeat(24)}${hex8(0x3fffffff)}`, undefined));
  t.false(quarter(`${'0'.repeat(24)}${hex8(0x40000000)}`, undefined));
  const recorded = Array.from({ length: 1000 }, (_, i) => quarter(`${'1'.repeat(24)}${hex8(i * 4_294_968)}`, undefined)).filter(Boolean).length;
  t.is(recorded, 250, 'evenly spread ids: a quarter of the roots');
  t.true(parentBasedRatio(1)(`${'0'.repeat(24)}ffffffff`, undefined));
  t.false(parentBasedRatio(0)(`${'0'.repeat(24)}00000001`, undefined));
  t.true(parentBasedRatio(0)('c'.repeat(32), parent(true)), 'a sampled parent is followed at ratio 0');
  t.false(parentBasedRatio(1)('c'.repeat(32), parent(false)), 'an unsampled parent is followed at ratio 1');
  t.throws(() => parentBasedRatio(1.5), { message: 'sample ratio: must be a number from 0 to 1, got 1.5' });
  t.throws(() => parentBasedRatio(Number.NaN), { message: /must be a number from 0 to 1/ });
});

test.serial('at ratio 0 nothing is recorded, and traceparent still travels, flagged unsampled', async (t) => {
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'test', exporters: [memory], sampleRatio: 0 });
  t.teardown(() => tracing.shutdown());
  const md = new Metadata();
  tracing.tracer.startActiveSpan('root', (root) => {
    t.false(root.isRecording());
    const child = childSpan('child', {});
    t.false(child?.isRecording());
    t.is(child?.spanContext().traceId, root.spanContext().traceId);
    injectTraceContext(md);
    child?.end();
    root.end();
  });
  t.regex(String(md.get('traceparent')[0]), /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  t.is(memory.getFinishedSpans().length, 0);
});

test.serial('at ratio 1 spans nest, keep their attributes and a status, and a remote sampled parent is joined', async (t) => {
  const memory = new InMemorySpanExporter();
  const tracing = await startTracing({ serviceName: 'test', exporters: [memory] });
  t.teardown(() => tracing.shutdown());
  const attributes = Object.freeze({ 'platform.resource': 'thermo' });
  await tracing.tracer.startActiveSpan('root', async (root) => {
    await Promise.resolve();
    const child = childSpan('driver thermo.getReadings', attributes)!;
    child.setAttribute('extra', 3);
    endSpan(child, new Error('no such reading'));
    root.end();
  });
  const remote = tracing.api.trace.setSpanContext(tracing.api.ROOT_CONTEXT, { ...parent(true), isRemote: true });
  tracing.tracer.startSpan('joined', {}, remote).end();
  const [child, root, joined] = memory.getFinishedSpans();
  t.is(child.name, 'driver thermo.getReadings');
  t.is(child.parentSpanContext?.spanId, root.spanContext().spanId, 'a child of the active span, across an await');
  t.is(child.spanContext().traceId, root.spanContext().traceId);
  t.deepEqual(child.attributes, { 'platform.resource': 'thermo', extra: 3 });
  t.deepEqual(attributes, { 'platform.resource': 'thermo' }, "the caller's attributes are not changed");
  t.deepEqual(child.status, { code: 2, message: 'no such reading' });
  t.is(root.parentSpanContext, undefined);
  t.is(joined.spanContext().traceId, 'a'.repeat(32));
  t.is(joined.parentSpanContext?.spanId, 'b'.repeat(16));
  t.true(child.duration[0] >= 0 && child.duration[1] >= 0);
});

/** An exporter that answers only when told to. */
function heldExporter() {
  const held: { spans: ReadableSpan[]; done: (r: { code: number }) => void }[] = [];
  const exporter: SpanExporter = { export: (spans, done) => held.push({ spans, done }), shutdown: () => Promise.resolve() };
  return { exporter, held };
}

test('a full queue drops new spans and counts them; the queue drains once the exporter answers', async (t) => {
  const { exporter, held } = heldExporter();
  const batcher = new SpanBatcher(exporter, { maxQueue: 10, maxBatch: 5, delayMs: 60_000 });
  const span = { name: 's' } as ReadableSpan;
  for (let i = 0; i < 30; i++) batcher.onEnd(span);
  t.is(batcher.counts.dropped, 20, 'ten kept, twenty dropped');
  t.is(batcher.queued, 10);
  await eventually(
    () => held.length,
    (n) => n === 1,
  );
  t.is(held[0].spans.length, 5, 'a full batch is sent without waiting for the delay');
  t.is(held.length, 1, 'one export at a time');
  held[0].done({ code: 0 });
  await eventually(
    () => held.length,
    (n) => n === 2,
  );
  held[1].done({ code: 1 });
  const flushed = batcher.forceFlush();
  t.is(batcher.queued, 0);
  await flushed;
  t.deepEqual(batcher.counts, { exported: 5, dropped: 20, failed: 5 });
});

test('an export that never answers counts as failed after its timeout', async (t) => {
  const { exporter } = heldExporter();
  const batcher = new SpanBatcher(exporter, { maxBatch: 2, exportTimeoutMs: 50 });
  batcher.onEnd({ name: 's' } as ReadableSpan);
  batcher.onEnd({ name: 's' } as ReadableSpan);
  await batcher.forceFlush();
  t.deepEqual(batcher.counts, { exported: 0, dropped: 0, failed: 2 });
  await batcher.shutdown();
  batcher.onEnd({ name: 's' } as ReadableSpan);
  t.is(batcher.counts.dropped, 1, 'after shutdown a span is dropped');
});

test.serial('spans reach an OTLP/HTTP receiver in OTLP JSON; without a receiver they count as failed', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const tracing = await startTracing({ serviceName: 'test-service', otlpEndpoint: receiver.url });
  const server = tracing.tracer.startSpan('call', { kind: 1, attributes: { s: 'x', i: 7, d: 0.5, b: true, list: ['a', 'b'] } });
  const context = tracing.api.trace.setSpan(tracing.api.ROOT_CONTEXT, server);
  tracing.tracer.startSpan('inner', {}, context).end();
  server.setStatus({ code: 2, message: 'NOT_FOUND' });
  server.end();
  await tracing.forceFlush();
  t.deepEqual(tracing.counts(), { exported: 2, dropped: 0, failed: 0 });
  await tracing.shutdown();
  const call = receiver.spans.find((s) => s.name === 'call')!;
  const inner = receiver.spans.find((s) => s.name === 'inner')!;
  t.is(call.service, 'test-service');
  t.is(call.kind, 2, 'SERVER in OTLP numbering');
  t.is(inner.kind, 1, 'INTERNAL in OTLP numbering');
  t.is(inner.parentSpanId, call.spanId);
  t.is(inner.traceId, call.traceId);
  t.is(call.parentSpanId, undefined);
  t.deepEqual(call.status, { code: 2, message: 'NOT_FOUND' });
  t.like(call.attributes, { s: 'x', i: 7, d: 0.5, b: true });

  // A port nobody listens on: the export fails and is counted; nothing throws.
  const free = createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const { port } = free.address() as { port: number };
  await new Promise((resolve) => free.close(resolve));
  const down = await startTracing({ serviceName: 'test-service', otlpEndpoint: `http://127.0.0.1:${port}` });
  down.tracer.startSpan('lost').end();
  await down.forceFlush();
  t.deepEqual(down.counts(), { exported: 0, dropped: 0, failed: 1 });
  await down.shutdown();
});
