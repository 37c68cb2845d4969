// gRPC spans: a server interceptor on both programs' servers (a SERVER span per call, its parent taken
// from the caller's W3C `traceparent` metadata) and a client interceptor for clients that carry the trace
// on (a CLIENT span, its context put into the call's metadata). Both record the status code
// (rpc.grpc.status_code; ERROR status for anything but OK). While tracing is off (activeTracing() unset)
// they pass calls through untouched and load nothing.
//
// The server span reaches the handler explicitly: the interceptor files the span's context under the
// call's metadata object (the one grpc-js gives the handler as `call.metadata`), and `callTraceContext`
// reads it back; core/grpc/unary.ts puts it into the call's own context beside its session, from where the
// driver call takes its parent. Where tracing keeps an async context (the cloud), the handler's events also
// run inside the span's context, so that spans deep in the handler's work (`sql query`) are children too.
import {
  InterceptingCall,
  Metadata,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type Interceptor,
  type ServerInterceptor,
  type ServerOptions,
} from '@grpc/grpc-js';
import type { Context, Span } from '@opentelemetry/api';
import { activeTracing, type Tracing } from './tracing.js';

const SPAN_KIND_SERVER = 1;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/** Per method path, made once: the served methods are a fixed set. */
const rpcByPath = new Map<string, { name: string; attributes: Readonly<Record<string, string>> }>();

/** The span's name (the method's path without the leading slash: `platform.app.data.v1.DataService/TabularDataBySQL`) and attributes. */
function rpcSpanOf(path: string): { name: string; attributes: Readonly<Record<string, string>> } {
  let rpc = rpcByPath.get(path);
  if (!rpc) {
    const [, service = '', method = ''] = /^\/([^/]+)\/(.+)$/.exec(path) ?? [];
    rpc = { name: path.replace(/^\//, ''), attributes: Object.freeze({ 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method }) };
    if (rpcByPath.size < 10_000) rpcByPath.set(path, rpc);
  }
  return rpc;
}

function endWith(span: Span, code: number, details?: string): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (code !== status.OK) span.setStatus({ code: STATUS_ERROR, message: `${status[code]}${details ? `: ${details}` : ''}` });
  span.end();
}

const TRACEPARENT = 'traceparent';

const getter = {
  keys: (md: Metadata) => Object.keys(md.getMap()),
  get: (md: Metadata, key: string) => md.get(key).map(String),
};
const setter = { set: (md: Metadata, key: string, value: string) => md.set(key, value) };

/** Each traced call's span context, by the call's metadata object (weak: gone with the call). */
const contextsByMetadata = new WeakMap<Metadata, Context>();

/** The server span's context of the call whose metadata this is, undefined when the call is not traced. */
export function callTraceContext(metadata: Metadata | undefined): Context | undefined {
  return metadata && contextsByMetadata.get(metadata);
}

export const callTracing: ServerInterceptor = (method, call) => {
  const tracing = activeTracing();
  if (!tracing) return new ServerInterceptingCall(call);
  const { api } = tracing;
  let span: Span | undefined;
  let context: Context | undefined;
  let ended = false;
  const end = (code: number, details?: string) => {
    if (!span || ended) return;
    ended = true;
    endWith(span, code, details);
  };
  const listener = new ServerListenerBuilder()
    .withOnReceiveMetadata((metadata, nextMetadata) => {
      // Most calls carry no traceparent: the propagator (and its getter's copies) only for those that do.
      const parent = metadata.get(TRACEPARENT).length > 0 ? api.propagation.extract(api.ROOT_CONTEXT, metadata, getter) : api.ROOT_CONTEXT;
      const rpc = rpcSpanOf(method.path);
      span = tracing.tracer.startSpan(rpc.name, { kind: SPAN_KIND_SERVER, attributes: rpc.attributes }, parent);
      context = api.trace.setSpan(parent, span);
      contextsByMetadata.set(metadata, context);
      nextMetadata(metadata);
    })
    .withOnCancel(() => end(status.CANCELLED));
  if (tracing.asyncContext) {
    // The handler runs from these events: inside the span's context, its own spans are children. A unary
    // handler runs at half-close, after its one message: entering the context for the message too would
    // cost an AsyncLocalStorage run per call for nothing. Without an async context (platform-server)
    // entering it would do nothing: the handler gets it explicitly (callTraceContext).
    const within = (fn: () => void) => (context ? api.context.with(context, fn) : fn());
    listener
      .withOnReceiveMessage((message, nextMessage) => (method.requestStream ? within(() => nextMessage(message)) : nextMessage(message)))
      .withOnReceiveHalfClose((nextHalfClose) => within(() => nextHalfClose()));
  }
  return new ServerInterceptingCall(call, {
    start: (next) => next(listener.build()),
    sendStatus: (sent, next) => {
      end(sent.code, sent.details);
      next(sent);
    },
  });
};

/** Server options with callTracing added. */
export function withCallTracing(options: ServerOptions): ServerOptions {
  return { ...options, interceptors: [callTracing, ...(options.interceptors ?? [])] };
}

/**
 * A CLIENT span around each call, child of the active context, its context sent as `traceparent`. (No
 * client of platform-server's main thread uses it: there is no async context there to find a parent in.)
 */
export function tracingClientInterceptor(tracing: Tracing | undefined = activeTracing()): Interceptor {
  return (options, nextCall) => {
    if (!tracing) return new InterceptingCall(nextCall(options));
    const rpc = rpcSpanOf(options.method_definition.path);
    const span = tracing.tracer.startSpan(rpc.name, { kind: SPAN_KIND_CLIENT, attributes: rpc.attributes });
    const context: Context = tracing.api.trace.setSpan(tracing.api.context.active(), span);
    return new InterceptingCall(nextCall(options), {
      start: (metadata, _listener, next) => {
        tracing.api.propagation.inject(context, metadata, setter);
        // A partial listener: grpc-js passes each event on to the caller's listener through `nextStatus`.
        next(metadata, {
          onReceiveStatus: (received, nextStatus) => {
            endWith(span, received.code, received.details);
            nextStatus(received);
          },
        });
      },
    });
  };
}

/**
 * Puts a span's context into `metadata` as `traceparent`: `context` when given (passed explicitly, see
 * inSpan), else the active one. Nothing while tracing is off.
 */
export function injectTraceContext(metadata: Metadata, context?: Context): void {
  const tracing = activeTracing();
  if (tracing) tracing.api.propagation.inject(context ?? tracing.api.context.active(), metadata, setter);
}
