// API tokens: an API's name (`core:component:board`) typed with the interface its resources implement.
// A token is the plain string at run time, so it still works wherever an api name is expected (model
// definitions, the registry, the gRPC adapters), and workers load no code for it. At compile time it
// carries the interface, so `dependencies.get(BOARD_API, name)` returns `Remote<Board>` without the
// caller choosing a type, and a model that declares `{ name, api: BOARD_API }` as a dependency lets the
// kernel check, when it resolves the config, that the named resource really is a board.
declare const apiInterface: unique symbol;

/** An API name that carries its resources' interface `T` (at compile time only). */
export type Api<T> = string & { readonly [apiInterface]?: T };

/** Declares the token of an API, e.g. `export const BOARD_API = defineApi<Board>('core:component:board')`. */
export function defineApi<T>(name: string): Api<T> {
  return name as Api<T>;
}

/** A dependency that a model declares from its attributes, with the API it must have. */
export interface TypedDependency {
  /** The resource name, as the attributes give it. */
  name: string;
  /** The API the named resource must have (a token or its name). */
  api: string;
  /** The attribute that names it (`board`, `camera_name`), for the config error. */
  field: string;
}
