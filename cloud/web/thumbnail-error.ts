// A thumbnail request that cannot be answered: the HTTP status and a message naming the rule.
export class ThumbnailError extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
  ) {
    super(message);
  }
}
