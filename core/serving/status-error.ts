// Errors that carry a gRPC status code. Handlers throw these; the adapters turn them into gRPC errors
// whose message names the field and the rule that was broken.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { ConfigError } from '../../plugins/validation.js';
import { boundMessage } from './bounded-text.js';

export class StatusError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    // Bounded here, so that no echoed input can make a status too large to send (bounded-text.ts).
    super(boundMessage(message));
    this.name = 'StatusError';
  }
}

export const invalidArgument = (message: string) => new StatusError(status.INVALID_ARGUMENT, message);
export const notFound = (message: string) => new StatusError(status.NOT_FOUND, message);
export const failedPrecondition = (message: string) => new StatusError(status.FAILED_PRECONDITION, message);
export const permissionDenied = (message: string) => new StatusError(status.PERMISSION_DENIED, message);
export const unauthenticated = (message: string) => new StatusError(status.UNAUTHENTICATED, message);
export const alreadyExists = (message: string) => new StatusError(status.ALREADY_EXISTS, message);
export const unavailable = (message: string) => new StatusError(status.UNAVAILABLE, message);
export const unimplemented = (message: string) => new StatusError(status.UNIMPLEMENTED, message);
export const deadlineExceeded = (message: string) => new StatusError(status.DEADLINE_EXCEEDED, message);
export const resourceExhausted = (message: string) => new StatusError(status.RESOURCE_EXHAUSTED, message);

const STATUS_NAMES = new Map(Object.entries(status).filter((entry): entry is [string, status] => typeof entry[1] === 'number'));
const STATUS_CODES = new Set(STATUS_NAMES.values());

/**
 * The one mapping from anything a handler throws to a gRPC status, for the runtime's and the cloud's
 * servers alike: a StatusError keeps its code; an error whose `code` is a gRPC status (a number, as a
 * downstream call's ServiceError has) or a status name (as DriverError has, also after crossing a
 * thread as a plain object) gets that status; a ConfigError (the plugin contract's, which the cloud may
 * import too) is INVALID_ARGUMENT; anything else is INTERNAL.
 */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'number' && STATUS_CODES.has(code)) return new StatusError(code, message);
  if (typeof code === 'string' && STATUS_NAMES.has(code)) return new StatusError(STATUS_NAMES.get(code)!, message);
  if (err instanceof ConfigError) return new StatusError(status.INVALID_ARGUMENT, message);
  return new StatusError(status.INTERNAL, message);
}

/** toStatusError in grpc-js's ServiceError shape, for callbacks and stream errors. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const { code, message } = toStatusError(err);
  return { code, details: message, metadata: new Metadata() };
}
