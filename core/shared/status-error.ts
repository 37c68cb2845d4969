// Errors that carry a gRPC status code. Handlers throw these; the adapters turn them into gRPC errors
// whose message names the field and the rule that was broken.
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';

export class StatusError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
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

/** Converts anything thrown by a handler into a grpc-js ServiceError. Unknown errors become INTERNAL. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  if (err instanceof StatusError) return { code: err.code, details: err.message, metadata: new Metadata() };
  const code = typeof (err as { code?: unknown })?.code === 'number' ? (err as { code: status }).code : status.INTERNAL;
  const message = err instanceof Error ? err.message : String(err);
  return { code, details: message, metadata: new Metadata() };
}
