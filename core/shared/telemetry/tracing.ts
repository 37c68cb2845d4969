// OpenTelemetry tracing for both programs, loaded only when it is turned on (the machine config's
// `tracing.enabled`, platform-cloud's --otlp-endpoint / OTEL_EXPORTER_OTLP_ENDPOINT): every OpenTelemetry
// module is imported dynamically here, so a program with tracing off loads none of the SDK. The gRPC
// interceptors (grpc-tracing.ts) read `activeTracing()` and pass calls through untouched while it is unset.
//
// Spans go to any of: an OTLP/HTTP collector (JSON over HTTP, `<endpoint>/v1/traces`), the console
// (stderr, one JSON line per span) and a file (one JSON line per span), or, in tests, given exporters.
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type * as Api from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TracingOptions {
  serviceName: string;
  /** Base URL of an OTLP/HTTP receiver (http://host:4318); `/v1/traces` is added unless it is there. */
  otlpEndpoint?: string;
  /** Each span as a JSON line on this stream (the console: stderr). */
  console?: NodeJS.WritableStream;
  /** Each span as a JSON line appended to a file in this folder (spans-<pid>.jsonl; a worker's spans-<pid>-<thread>.jsonl). */
  diskDir?: string;
  /** Extra exporters (tests: the in-memory exporter), each with a simple (unbatched) processor. */
  exporters?: SpanExporter[];
}

export interface Tracing {
  api: typeof Api;
  tracer: Api.Tracer;
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

function lineExporter(stream: NodeJS.WritableStream, ExportResultCode: { SUCCESS: number }): SpanExporter {
  return {
    export: (spans, done) => {
      stream.write(spans.map((s) => `${spanLine(s)}\n`).join(''));
      done({ code: ExportResultCode.SUCCESS });
    },
    shutdown: () => Promise.resolve(),
  };
}

export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (active) throw new Error('tracing is already started in this process');
  const otlpUrl = options.otlpEndpoint === undefined ? undefined : tracesUrl(options.otlpEndpoint);
  const [api, base, hooks, core, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const processors: SpanProcessor[] = (options.exporters ?? []).map((e) => new base.SimpleSpanProcessor(e));
  if (otlpUrl) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processors.push(new base.BatchSpanProcessor(new OTLPTraceExporter({ url: otlpUrl }), { scheduledDelayMillis: 1000 }));
  }
  if (options.console) processors.push(new base.SimpleSpanProcessor(lineExporter(options.console, core.ExportResultCode)));
  if (options.diskDir) {
    mkdirSync(options.diskDir, { recursive: true });
    const file = createWriteStream(join(options.diskDir, `spans-${process.pid}${threadId ? `-${threadId}` : ''}.jsonl`), { flags: 'a', mode: 0o600 });
    processors.push(new base.BatchSpanProcessor(lineExporter(file, core.ExportResultCode)));
  }
  const provider = new base.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: processors,
  });
  api.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  const tracing: Tracing = {
    api,
    tracer: provider.getTracer('platform'),
    shutdown: async () => {
      await provider.forceFlush();
      await provider.shutdown();
      if (active === tracing) active = undefined;
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
  active = tracing;
  return tracing;
}

/**
 * Runs `fn` inside an INTERNAL span (a child of the active span) when tracing is on; otherwise just
 * runs it. A rejection marks the span as an ERROR with its message.
 */
export function inSpan<T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const tracing = active;
  if (!tracing) return fn();
  return tracing.tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: 2, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}
