// Errors the client raises itself, before any call (SPEC.md "Errors"): a value error for mismatched
// arguments and a file-not-found error for a missing upload path. Server errors arrive as grpc-js
// ServiceErrors carrying a status code.
export class ValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValueError';
  }
}

export class FileNotFoundError extends Error {
  readonly code = 'ENOENT';
  constructor(readonly path: string) {
    super(`file not found: ${path}`);
    this.name = 'FileNotFoundError';
  }
}
