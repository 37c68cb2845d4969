// OpenTelemetry tracing for both programs, loaded only when it is turned on (the machine config's
// `tracing.enabled`, platform-cloud's --otlp-endpoint / OTEL_EXPORTER_OTLP_ENDPOINT): every OpenTelemetry
// module is imported dynamically here, so a program with tracing off loads none of it. The gRPC
// interceptors (grpc-tracing.ts) read `activeTracing()` and pass calls through untouched while it is unset.
//
// The OpenTelemetry API (context, propagation, the Span and Tracer interfaces) is the SDK's; the spans,
// the sampler and the export are the platform's own (lean-span.ts, lean-tracer.ts, span-batcher.ts,
// otlp-json.ts): bench:telemetry found the SDK's span and exporter costing a call on the runtime several
// times the 5 % the telemetry may add. Spans go to any of: an OTLP/HTTP collector (JSON, batched), the
// console (stderr, one JSON line per span, as each ends), a file (JSON lines, batched) and, in tests,
// given exporters (each span as it ends).
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type * as Api from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { LeanSpan } from './lean-span.js';
// The platform's tracer is imported statically (node built-ins only at load): driver workers run from
// source in tests, where a dynamic import of a sibling module is not resolved.
import { LeanTracer, parentBasedRatio } from './lean-tracer.js';
import { ImmediateSink, SpanBatcher, type BatchOptions, type SpanCounts, type SpanSink } from './span-batcher.js';
import { otlpJsonExporter } from './otlp-json.js';

export interface TracingOptions {
  serviceName: string;
  /** Base URL of an OTLP/HTTP receiver (http://host:4318); `/v1/traces` is added unless it is there. */
  otlpEndpoint?: string;
  /** Each span as a JSON line on this stream (the console: stderr). */
  console?: NodeJS.WritableStream;
  /** Each span as a JSON line appended to a file in this folder (spans-<pid>.jsonl; a worker's spans-<pid>-<thread>.jsonl). */
  diskDir?: string;
  /** Extra exporters (tests: the in-memory exporter), each given every span as it ends. */
  exporters?: SpanExporter[];
  /** The share of new traces recorded, 0 to 1 (default 1: every one); a span with a parent follows its parent. */
  sampleRatio?: number;
  /** The OTLP and file queues' sizes and timing (span-batcher.ts's defaults otherwise). */
  batch?: Partial<BatchOptions>;
  /**
   * Whether the active span follows the async work (OpenTelemetry's AsyncLocalStorage context manager;
   * default true). platform-server turns it off: on Node 20 it costs every promise of the process an
   * async hook (bench:telemetry: most of tracing's cost on a GetReadings call), so there each parent is
   * passed explicitly (the call's span rides the gRPC call's own context, core/session/context.ts) and
   * `context.active()` is always the root context.
   */
  asyncContext?: boolean;
}

export interface Tracing {
  api: typeof Api;
  tracer: Api.Tracer;
  /** Whether `api.context.active()` follows the async work (see TracingOptions.asyncContext). */
  asyncContext: boolean;
  /** Spans exported, dropped (a full queue) and failed, summed over the destinations. */
  counts(): SpanCounts;
  /** Sends every queued span now. */
  forceFlush(): Promise<void>;
  /** Flushes every exporter, then stops. */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The running tracing, or undefined when it is off. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** The OTLP/HTTP traces URL of an endpoint given as OTEL_EXPORTER_OTLP_ENDPOINT is (a base URL). */
export function tracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`OTLP endpoint ${JSON.stringify(endpoint)}: not a URL (http://host:4318)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`OTLP endpoint ${JSON.stringify(endpoint)}: must be http:// or https://`);
  return url.pathname.endsWith('/v1/traces') ? url.href : `${url.href.replace(/\/$/, '')}/v1/traces`;
}

/** A span as one line of JSON: what an operator reads on the console or in the file. */
export function spanLine(span: ReadableSpan): string {
  const ctx = span.spanContext();
  return JSON.stringify({
    name: span.name,
    trace_id: ctx.traceId,
    span_id: ctx.spanId,
    parent_span_id: span.parentSpanContext?.spanId,
    kind: span.kind,
    start: new Date(span.startTime[0] * 1000 + span.startTime[1] / 1e6).toISOString(),
    duration_ms: span.duration[0] * 1000 + span.duration[1] / 1e6,
    status: span.status,
    attributes: span.attributes,
    service: span.resource.attributes['service.name'],
  });
}

function lineExporter(stream: NodeJS.WritableStream): SpanExporter {
  return {
    export: (spans, done) => {
      stream.write(spans.map((s) => `${spanLine(s)}\n`).join(''));
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
}

export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (active) throw new Error('tracing is already started in this process');
  const otlpUrl = options.otlpEndpoint === undefined ? undefined : tracesUrl(options.otlpEndpoint);
  const sampled = parentBasedRatio(options.sampleRatio ?? 1);
  const asyncContext = options.asyncContext ?? true;
  const [api, hooks, core, resources] = await Promise.all([
    import('@opentelemetry/api'),
    asyncContext ? import('@opentelemetry/context-async-hooks') : undefined,
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const sinks: SpanSink[] = (options.exporters ?? []).map((e) => new ImmediateSink(e));
  if (otlpUrl) sinks.push(new SpanBatcher(otlpJsonExporter(otlpUrl), options.batch));
  if (options.console) sinks.push(new ImmediateSink(lineExporter(options.console)));
  if (options.diskDir) {
    mkdirSync(options.diskDir, { recursive: true });
    const file = createWriteStream(join(options.diskDir, `spans-${process.pid}${threadId ? `-${threadId}` : ''}.jsonl`), { flags: 'a', mode: 0o600 });
    sinks.push(new SpanBatcher(lineExporter(file), options.batch));
  }
  const owner = {
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    scope: { name: 'platform' },
    onEnd: (span: LeanSpan) => {
      for (const sink of sinks) sink.onEnd(span);
    },
  };
  const tracer = new LeanTracer(api, owner, sampled);
  if (hooks) api.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  const tracing: Tracing = {
    api,
    tracer,
    asyncContext,
    counts: () => {
      const total: SpanCounts = { exported: 0, dropped: 0, failed: 0 };
      for (const { counts } of sinks) {
        total.exported += counts.exported;
        total.dropped += counts.dropped;
        total.failed += counts.failed;
      }
      return total;
    },
    forceFlush: async () => {
      await Promise.all(sinks.map((s) => s.forceFlush()));
    },
    shutdown: async () => {
      await Promise.all(sinks.map((s) => s.shutdown()));
      if (active === tracing) active = undefined;
      api.context.disable();
      api.propagation.disable();
    },
  };
  active = tracing;
  return tracing;
}

/**
 * Runs `fn` inside an INTERNAL span when tracing is on; otherwise just runs it. The span is a child of
 * `parent` when given, else of the active span (where there is no async context, a root). `fn` gets the
 * span's context, to pass on explicitly (as `traceparent`: injectTraceContext(md, context)); it is also
 * made active for the async context, where there is one. A rejection marks the span as an ERROR with its message.
 */
export function inSpan<T>(name: string, attributes: Record<string, string>, fn: (context?: Api.Context) => Promise<T>, parent?: Api.Context): Promise<T> {
  const tracing = active;
  if (!tracing) return fn();
  const { api } = tracing;
  const parentContext = parent ?? api.context.active();
  const span = tracing.tracer.startSpan(name, { attributes }, parentContext);
  const context = api.trace.setSpan(parentContext, span);
  return api.context.with(context, async () => {
    try {
      return await fn(context);
    } catch (err) {
      span.setStatus({ code: 2, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A span that is a child of `parent` (a gRPC call's span context, passed explicitly) or else of the active
 * span, and is NOT made active itself: for work that leaves this thread (a call into a driver's worker),
 * where nothing on this thread runs inside it, so the cost of entering a context is saved. Undefined while
 * tracing is off. End it with `endSpan`.
 */
export function childSpan(name: string, attributes: Readonly<Api.Attributes>, parent?: Api.Context): Api.Span | undefined {
  return active?.tracer.startSpan(name, { attributes }, parent);
}

/** Ends a span from `childSpan`, an ERROR with the error's message when `error` is given. */
export function endSpan(span: Api.Span, error?: unknown): void {
  if (error !== undefined) span.setStatus({ code: 2, message: (error as Error)?.message ?? String(error) });
  span.end();
}

/**
 * A span that starts a trace of its own (sampled by the sample ratio), for work no call asked for: a
 * capture batch, a PostgreSQL statement. Undefined while tracing is off.
 */
export function rootSpan(name: string, options: Omit<Api.SpanOptions, 'root'> = {}): Api.Span | undefined {
  return active?.tracer.startSpan(name, { ...options, root: true });
}

/**
 * A child of `parent` given explicitly, for code that does not run inside the parent's async context (an
 * async generator resumed by its reader, message callbacks). Undefined while tracing is off or without a parent.
 */
export function childSpanOf(parent: Api.Span | undefined, name: string, attributes?: Api.Attributes): Api.Span | undefined {
  const tracing = active;
  if (!tracing || !parent) return undefined;
  return tracing.tracer.startSpan(name, { attributes }, tracing.api.trace.setSpan(tracing.api.ROOT_CONTEXT, parent));
}
