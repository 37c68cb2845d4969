// Adapts async handlers to grpc-js unary callbacks, turning thrown errors into gRPC statuses whose
// messages name what went wrong.
import { status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { DriverError, type DriverErrorCode } from '../../plugins/errors.js';
import { ConfigError } from '../../plugins/validation.js';
import { callSession } from '../session/context.js';
import { SESSION_METADATA } from '../session/sessions.js';
import { StatusError, toServiceError } from '../shared/status-error.js';

const CODES: Record<DriverErrorCode, status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  UNIMPLEMENTED: status.UNIMPLEMENTED,
  NOT_FOUND: status.NOT_FOUND,
  OUT_OF_RANGE: status.OUT_OF_RANGE,
  UNAVAILABLE: status.UNAVAILABLE,
  DEADLINE_EXCEEDED: status.DEADLINE_EXCEEDED,
  INTERNAL: status.INTERNAL,
};

export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  if (err instanceof DriverError) return new StatusError(CODES[err.code], err.message);
  if (err instanceof ConfigError) return new StatusError(status.INVALID_ARGUMENT, err.message);
  const { code, details } = toServiceError(err);
  return new StatusError(code ?? status.INTERNAL, details ?? String(err));
}

export function unary<Req, Res>(handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res> | Res) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    // The caller's session, if any, travels with the handler's async work (see core/session/context.ts).
    const session = call.metadata?.get(SESSION_METADATA)[0];
    Promise.resolve()
      .then(() => callSession.run(typeof session === 'string' && session ? session : undefined, () => handler(call.request, call)))
      .then(
        (response) => callback(null, response),
        (err) => {
          const error = toStatusError(err);
          callback({ code: error.code, details: error.message, name: 'StatusError', message: error.message });
        },
      );
  };
}
