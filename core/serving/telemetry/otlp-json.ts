// Spans to an OTLP/HTTP receiver in OTLP's JSON encoding (POST <endpoint>/v1/traces, an
// ExportTraceServiceRequest): ids as hex, times as decimal nanoseconds, kinds and status codes in OTLP's
// numbering. Written here rather than through the SDK's exporter packages, which bench:telemetry found
// costing several microseconds per span on the runtime's thread (a generic transformer, then JSON); the
// JSON is written as text (otlpSpanJson).
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

/**
 * The JSON of a list of attributes. The same attributes object recurs (the gRPC and driver spans'
 * attributes are made once per method and frozen), so a frozen object's JSON is kept (weakly).
 */
const frozenJson = new WeakMap<Attributes, string>();
function attributesJson(attributes: Attributes | undefined): string {
  if (!attributes) return '[]';
  const frozen = Object.isFrozen(attributes);
  const known = frozen ? frozenJson.get(attributes) : undefined;
  if (known !== undefined) return known;
  const json = JSON.stringify(keyValues(attributes));
  if (frozen) frozenJson.set(attributes, json);
  return json;
}

/**
 * One span's OTLP JSON, written as text: building the object tree first and then JSON.stringify-ing it
 * cost about twice as much on the runtime's thread. Ids are hex (nothing to escape); strings go through
 * JSON.stringify.
 */
function otlpSpanJson(span: ReadableSpan): string {
  const context = span.spanContext();
  const parent = span.parentSpanContext ? `,"parentSpanId":"${span.parentSpanContext.spanId}"` : '';
  const state = context.traceState ? `,"traceState":${JSON.stringify(context.traceState.serialize())}` : '';
  // OTLP counts kinds from SPAN_KIND_UNSPECIFIED = 0: INTERNAL is 1, SERVER 2, CLIENT 3.
  const head = `{"traceId":"${context.traceId}","spanId":"${context.spanId}"${parent}${state},"flags":${context.traceFlags},"name":${JSON.stringify(span.name)},"kind":${span.kind + 1}`;
  const times = `,"startTimeUnixNano":"${nanos(span.startTime)}","endTimeUnixNano":"${nanos(span.endTime)}"`;
  const events =
    span.events.length === 0
      ? '[]'
      : JSON.stringify(span.events.map((e) => ({ timeUnixNano: nanos(e.time), name: e.name, attributes: keyValues(e.attributes) })));
  const links =
    span.links.length === 0
      ? '[]'
      : JSON.stringify(span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: keyValues(l.attributes) })));
  const status = span.status.message ? `{"code":${span.status.code},"message":${JSON.stringify(span.status.message)}}` : `{"code":${span.status.code}}`;
  return `${head}${times},"attributes":${attributesJson(span.attributes)},"events":${events},"links":${links},"status":${status}}`;
}

/** The JSON body of one export: the spans grouped by resource (in practice one: the program's). */
export function otlpTraceBody(spans: readonly ReadableSpan[]): string {
  const byResource = new Map<ReadableSpan['resource'], ReadableSpan[]>();
  for (const span of spans) {
    const list = byResource.get(span.resource);
    if (list) list.push(span);
    else byResource.set(span.resource, [span]);
  }
  const resources = [...byResource].map(
    ([resource, list]) =>
      `{"resource":{"attributes":${JSON.stringify(keyValues(resource.attributes))}},"scopeSpans":[{"scope":{"name":${JSON.stringify(list[0].instrumentationScope.name)}},"spans":[${list.map(otlpSpanJson).join(',')}]}]}`,
  );
  return `{"resourceSpans":[${resources.join(',')}]}`;
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
