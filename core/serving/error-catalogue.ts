// How each side declares its errors in one catalogue (core/errors/catalogue.ts for the machine,
// cloud/kit/errors.ts for the cloud), in the manner of avvio's lib/errors.js: a table of stable codes,
// each with its message template, from which the error classes are made. A caller and a test tell errors
// apart by `errorCode`, which never changes, not by the wording of the message, which may; the message
// still names what the error is about (the resource, field or file, and the rule it broke).
//
// The code is `errorCode`, not `code`: across this platform `code` is a gRPC status (StatusError,
// DriverError, grpc-js's ServiceError), and toStatusError maps an error by it.

/** An error of a catalogue. */
export interface CatalogueError extends Error {
  /** The stable code of its catalogue entry, e.g. `CORE_ERR_VERSION_SPEC`. */
  readonly errorCode: string;
}

/** A class made from a catalogue entry: `new` takes the template's arguments. */
export interface CatalogueErrorClass<A extends unknown[], F extends object> {
  new (...args: A): CatalogueError & Readonly<F>;
  readonly errorCode: string;
  readonly prototype: CatalogueError & Readonly<F>;
}

const CODE = /^(CORE|CLOUD)_ERR_[A-Z0-9_]+$/;

/**
 * An error class for one catalogue entry: `name` is the class name errors print with, `message` the
 * template that builds the message from the arguments, and `fields` what of the arguments the error
 * keeps for its callers (`err.field`, `err.rule`).
 */
export function defineError<A extends unknown[], F extends object = object>(
  errorCode: string,
  name: string,
  message: (...args: A) => string,
  fields?: (...args: A) => F,
): CatalogueErrorClass<A, F> {
  if (!CODE.test(errorCode)) throw new Error(`error code ${JSON.stringify(errorCode)}: must match ${CODE}`);
  const made = class extends Error {
    static readonly errorCode = errorCode;
    readonly errorCode = errorCode;
    constructor(...args: A) {
      super(message(...args));
      this.name = name;
      if (fields) Object.assign(this, fields(...args));
    }
  };
  Object.defineProperty(made, 'name', { value: name });
  return made as unknown as CatalogueErrorClass<A, F>;
}

/** Checks a catalogue: every code once. Returns the codes, for the catalogue's own test. */
export function catalogueCodes(classes: readonly { errorCode: string; name: string }[]): string[] {
  const seen = new Map<string, string>();
  for (const c of classes) {
    const other = seen.get(c.errorCode);
    if (other) throw new Error(`error code ${c.errorCode} is declared twice (${other} and ${c.name})`);
    seen.set(c.errorCode, c.name);
  }
  return [...seen.keys()];
}

/** The catalogue code of an error, or undefined when it is not a catalogue error. */
export function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { errorCode?: unknown } | null | undefined)?.errorCode;
  return typeof code === 'string' ? code : undefined;
}
