// Errors that drivers throw to callers. They cross thread boundaries as plain objects ({code, message}),
// so they carry a string code rather than a class identity; the gRPC layer maps the code to a status.
export type DriverErrorCode =
  'INVALID_ARGUMENT' | 'FAILED_PRECONDITION' | 'UNIMPLEMENTED' | 'NOT_FOUND' | 'OUT_OF_RANGE' | 'UNAVAILABLE' | 'DEADLINE_EXCEEDED' | 'INTERNAL';

export class DriverError extends Error {
  /**
   * @param resource The resource whose driver failed (or that the error is about). The worker host
   * fills it in for any error a driver throws, so logs and callers can name the resource.
   */
  constructor(
    readonly code: DriverErrorCode,
    message: string,
    readonly resource?: string,
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
  /** The resource whose driver threw it. */
  resource?: string;
  stack?: string;
}

/** An error as a plain object that crosses threads; `resource` names the resource unless it already does. */
export function serializeError(err: unknown, resource?: string): SerializedError {
  const plain = serializePlain(err);
  const named = (err as { resource?: unknown })?.resource;
  const owner = typeof named === 'string' ? named : resource;
  return owner === undefined ? plain : { ...plain, resource: owner };
}

function serializePlain(err: unknown): SerializedError {
  if (err instanceof DriverError) return { code: err.code, message: err.message, stack: err.stack };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { code: isDriverErrorCode(code) ? code : 'INTERNAL', message: err.message, stack: err.stack };
  }
  return { code: 'INTERNAL', message: String(err) };
}

export function deserializeError(err: SerializedError): DriverError {
  const error = new DriverError(err.code, err.message, err.resource);
  if (err.stack) error.stack = err.stack;
  return error;
}

function isDriverErrorCode(code: unknown): code is DriverErrorCode {
  return (
    typeof code === 'string' &&
    ['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'UNIMPLEMENTED', 'NOT_FOUND', 'OUT_OF_RANGE', 'UNAVAILABLE', 'DEADLINE_EXCEEDED', 'INTERNAL'].includes(code)
  );
}
