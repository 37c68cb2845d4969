// The plugin contract shared by built-in drivers and module plugins.
//
// A model is declared once, on the main thread, with `defineModel`: its api, its model name, a zod schema
// for its attributes, the implicit dependencies those attributes name, and the URL of its driver module.
// The driver module runs inside the resource's own worker thread; its default export is a DriverFactory
// that receives the validated attributes and proxies to its dependencies. The driver module must not
// import the model module at runtime (only its types), and imports the driver side of this contract
// from plugins/driver.js, so that workers start without loading zod.
import type * as z from 'zod';
import type { TypedDependency } from './api.js';
import { checkModelName, parseApi } from './names.js';
import { ConfigError, parseConfig } from './validation.js';

export type { Dependencies, DriverContext, DriverFactory, DriverLogger, Remote, Resource } from './driver.js';
export { defineDriver } from './driver.js';
import { CAPTURE_METHOD_NAME, type CaptureMethodDeclaration } from './capture.js';
export type { CaptureKind, CaptureMethodDeclaration, CapturedBinary } from './capture.js';
export { defineApi, type Api, type TypedDependency } from './api.js';

export interface ModelDefinition<S extends z.ZodType = z.ZodType> {
  /** `<namespace>:<kind>:<subtype>`, e.g. `core:component:sensor`. */
  readonly api: string;
  /** A bare name for built-ins (`fake`), `<namespace>:<module>:<model>` for modules. */
  readonly model: string;
  /** Validates and defaults the attributes; also the attribute schema that -dump-resources prints. */
  readonly attributes: S;
  /**
   * The resources that the attributes refer to, such as a motor's board. Declare each with its API,
   * `{ name: attrs.board, api: BOARD_API, field: 'board' }`, and the kernel refuses a config whose
   * `board` names a resource of another API; a bare name is a dependency of any API.
   */
  readonly implicitDependencies?: (attributes: z.output<S>) => Array<string | TypedDependency>;
  /** The driver module (its default export is a DriverFactory); resolved in the worker. */
  readonly driver: URL;
  readonly description?: string;
  /**
   * Data capture methods this model adds to its api's built-in ones, by capture method name (see
   * plugins/capture.ts). Resources of the model may then name them in their data_manager service_configs.
   */
  readonly captureMethods?: Readonly<Record<string, CaptureMethodDeclaration>>;
}

/** Declares a model. Misuse (a bad api, model name or driver URL) throws now, at registration. */
export function defineModel<S extends z.ZodType>(definition: ModelDefinition<S>): ModelDefinition<S> {
  parseApi(definition.api, `model ${definition.model}: api`);
  checkModelName(definition.model, `model ${definition.model}`);
  if (!(definition.driver instanceof URL)) {
    throw new ConfigError(`model ${definition.model}: driver`, 'must be a URL, e.g. new URL("./driver.js", import.meta.url)');
  }
  for (const [name, method] of Object.entries(definition.captureMethods ?? {})) {
    const at = `model ${definition.model}: captureMethods.${name}`;
    if (!CAPTURE_METHOD_NAME.test(name)) throw new ConfigError(at, 'a capture method name starts with a capital letter and holds only letters and digits');
    if (method?.kind !== 'tabular' && method?.kind !== 'binary') throw new ConfigError(`${at}.kind`, 'must be "tabular" or "binary"');
    if (typeof method.driverMethod !== 'string' || !method.driverMethod) throw new ConfigError(`${at}.driverMethod`, 'must name a method of the driver');
  }
  return Object.freeze({ ...definition });
}

export interface ValidatedAttributes<A = unknown> {
  readonly attributes: A;
  readonly implicitDependencies: string[];
  /** The implicit dependencies declared with their API, which the kernel checks. */
  readonly typedDependencies: TypedDependency[];
}

/**
 * A model's config validator: validates the attributes found at `path` and returns them with their
 * implicit dependencies. Throws a ConfigError naming the path and the rule.
 */
export function validateAttributes<S extends z.ZodType>(definition: ModelDefinition<S>, raw: unknown, path: string): ValidatedAttributes<z.output<S>> {
  const attributes = parseConfig(definition.attributes, raw ?? {}, path);
  const declared = definition.implicitDependencies?.(attributes) ?? [];
  const implicitDependencies = [...new Set(declared.map((d) => (typeof d === 'string' ? d : d.name)))].filter(Boolean);
  const typedDependencies = declared.filter((d): d is TypedDependency => typeof d !== 'string' && Boolean(d.name));
  return { attributes, implicitDependencies, typedDependencies };
}
