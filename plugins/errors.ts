// Errors that drivers throw to callers. They cross thread boundaries as plain objects ({code, message}),
// so they carry a string code rather than a class identity; the gRPC layer maps the code to a status.
export type DriverErrorCode =
  | 'INVALID_ARGUMENT'
  | 'FAILED_PRECONDITION'
  | 'UNIMPLEMENTED'
  | 'NOT_FOUND'
  | 'OUT_OF_RANGE'
  | 'UNAVAILABLE'
  | 'DEADLINE_EXCEEDED'
  | 'INTERNAL';

export class DriverError extends Error {
  constructor(
    readonly code: DriverErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DriverError';
  }
}

export const invalidArgument = (message: string) => new DriverError('INVALID_ARGUMENT', message);
export const failedPrecondition = (message: string) => new DriverError('FAILED_PRECONDITION', message);
export const unimplemented = (message: string) => new DriverError('UNIMPLEMENTED', message);
export const outOfRange = (message: string) => new DriverError('OUT_OF_RANGE', message);

/** The shape of an error after it crossed a thread: enough to rebuild a DriverError. */
export interface SerializedError {
  code: DriverErrorCode;
  message: string;
  stack?: string;
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof DriverError) return { code: err.code, message: err.message, stack: err.stack };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { code: isDriverErrorCode(code) ? code : 'INTERNAL', message: err.message, stack: err.stack };
  }
  return { code: 'INTERNAL', message: String(err) };
}

export function deserializeError(err: SerializedError): DriverError {
  const error = new DriverError(err.code, err.message);
  if (err.stack) error.stack = err.stack;
  return error;
}

function isDriverErrorCode(code: unknown): code is DriverErrorCode {
  return typeof code === 'string' && ['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'UNIMPLEMENTED', 'NOT_FOUND', 'OUT_OF_RANGE', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'INTERNAL'].includes(code);
}
