// Spans to an OTLP/HTTP receiver in OTLP's JSON encoding (POST <endpoint>/v1/traces, an
// ExportTraceServiceRequest): ids as hex, times as decimal nanoseconds, kinds and status codes in OTLP's
// numbering. Written here rather than through the SDK's exporter packages, which bench:telemetry found
// costing several microseconds per span on the runtime's thread (a generic transformer, then JSON).
// One keep-alive connection; a batch the receiver does not answer with 2xx counts as failed (no retry:
// the batcher's counters show it, and the next batch is tried as usual).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AttributeValue, Attributes } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

type AnyValue = { stringValue: string } | { boolValue: boolean } | { intValue: number } | { doubleValue: number } | { arrayValue: { values: AnyValue[] } };

function anyValue(value: AttributeValue): AnyValue {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
  return { arrayValue: { values: value.filter((v) => v !== null && v !== undefined).map((v) => anyValue(v as AttributeValue)) } };
}

function keyValues(attributes: Attributes | undefined): { key: string; value: AnyValue }[] {
  const list: { key: string; value: AnyValue }[] = [];
  if (!attributes) return list;
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value !== undefined && value !== null) list.push({ key, value: anyValue(value) });
  }
  return list;
}

/** Nanoseconds since the epoch as OTLP's decimal string, from [seconds, nanoseconds]. */
const nanos = ([seconds, ns]: readonly [number, number]) => `${seconds}${String(ns).padStart(9, '0')}`;

function otlpSpan(span: ReadableSpan) {
  const context = span.spanContext();
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
    ...(context.traceState ? { traceState: context.traceState.serialize() } : {}),
    flags: context.traceFlags,
    name: span.name,
    kind: span.kind + 1, // OTLP counts from SPAN_KIND_UNSPECIFIED = 0: INTERNAL is 1, SERVER 2, CLIENT 3
    startTimeUnixNano: nanos(span.startTime),
    endTimeUnixNano: nanos(span.endTime),
    attributes: keyValues(span.attributes),
    events: span.events.map((e) => ({ timeUnixNano: nanos(e.time), name: e.name, attributes: keyValues(e.attributes) })),
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: keyValues(l.attributes) })),
    status: span.status.message ? { code: span.status.code, message: span.status.message } : { code: span.status.code },
  };
}

/** The JSON body of one export: the spans grouped by resource (in practice one: the program's). */
export function otlpTraceBody(spans: readonly ReadableSpan[]): string {
  const byResource = new Map<ReadableSpan['resource'], ReadableSpan[]>();
  for (const span of spans) {
    const list = byResource.get(span.resource);
    if (list) list.push(span);
    else byResource.set(span.resource, [span]);
  }
  return JSON.stringify({
    resourceSpans: [...byResource].map(([resource, list]) => ({
      resource: { attributes: keyValues(resource.attributes) },
      scopeSpans: [{ scope: { name: list[0].instrumentationScope.name }, spans: list.map(otlpSpan) }],
    })),
  });
}

/** An exporter that POSTs each batch to `url` (the full `/v1/traces` URL). */
export function otlpJsonExporter(url: string, timeoutMs = 10_000): SpanExporter {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const request = secure ? httpsRequest : httpRequest;
  return {
    export(spans, done) {
      const body = Buffer.from(otlpTraceBody(spans));
      const failed = (error: Error) => done({ code: 1, error });
      const req = request(
        target,
        { method: 'POST', agent, timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (res: IncomingMessage) => {
          res.resume(); // the body (an ExportTraceServiceResponse) says nothing the status does not
          res.on('end', () => {
            const code = res.statusCode ?? 0;
            if (code >= 200 && code < 300) done({ code: 0 });
            else failed(new Error(`OTLP receiver answered ${code}`));
          });
          res.on('error', failed);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`OTLP receiver did not answer in ${timeoutMs} ms`)));
      req.on('error', failed);
      req.end(body);
    },
    shutdown: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}
