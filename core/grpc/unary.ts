// Adapts async handlers to grpc-js unary callbacks, turning thrown errors into gRPC statuses whose
// messages name what went wrong.
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { callContext } from '../session/context.js';
import { SESSION_METADATA } from '../session/sessions.js';
import { callTraceContext } from '../serving/telemetry/grpc-tracing.js';
import { toStatusError } from '../serving/status-error.js';

// The mapping lives in core/serving/status-error.ts, shared with the cloud; re-exported for the adapters.
export { toStatusError };

export function unary<Req, Res>(handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res> | Res) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    // The caller's session and the call's span, if any, travel with the handler's async work (see
    // core/session/context.ts).
    const session = call.metadata?.get(SESSION_METADATA)[0];
    const context = { session: typeof session === 'string' && session ? session : undefined, trace: callTraceContext(call.metadata) };
    Promise.resolve()
      .then(() => callContext.run(context, () => handler(call.request, call)))
      .then(
        (response) => callback(null, response),
        (err) => {
          const error = toStatusError(err);
          callback({ code: error.code, details: error.message, name: 'StatusError', message: error.message });
        },
      );
  };
}
