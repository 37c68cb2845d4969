// Calls and latency of a gRPC server per method and status code, both programs' servers (and the calls
// their web ports forward, which reach the same server). A server interceptor sees every call of a
// served method, the module-defined and standard services included; unknown methods never reach it.
import { ServerInterceptingCall, ServerListenerBuilder, status, type ServerInterceptor, type ServerOptions } from '@grpc/grpc-js';
import { counter, histogram, secondsSince } from './metrics.js';

const calls = counter('grpc_server_handled_total', 'gRPC calls completed, by method and status code', ['grpc_method', 'grpc_code']);
const latency = histogram('grpc_server_handling_seconds', 'gRPC call time from its start to its status, by method and status code', [
  'grpc_method',
  'grpc_code',
]);

/** "OK", "NOT_FOUND", … for a status code. */
export function codeName(code: number): string {
  return status[code] ?? String(code);
}

export const callMetrics: ServerInterceptor = (method, call) => {
  const started = process.hrtime.bigint();
  let recorded = false;
  const record = (code: number) => {
    if (recorded) return;
    recorded = true;
    const labels = { grpc_method: method.path, grpc_code: codeName(code) };
    calls.inc(labels);
    latency.observe(labels, secondsSince(started));
  };
  return new ServerInterceptingCall(call, {
    // A call the client cancels gets no status from the server.
    start: (next) => next(new ServerListenerBuilder().withOnCancel(() => record(status.CANCELLED)).build()),
    sendStatus: (sent, next) => {
      record(sent.code);
      next(sent);
    },
  });
};

/** Server options with callMetrics first, so that it times the whole call. */
export function withCallMetrics(options: ServerOptions): ServerOptions {
  return { ...options, interceptors: [callMetrics, ...(options.interceptors ?? [])] };
}
