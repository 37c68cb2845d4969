// module.json: what a module folder declares about itself. Every rule broken is named with its field,
// e.g. `module.json models[0].model "acme:other:x": must start with the module_id acme:weather`.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import semver from 'semver';
import * as z from 'zod';
import { checkModelName, parseApi } from '../names.js';
import { ConfigError, parseConfig } from '../validation.js';

export const MANIFEST_FILE = 'module.json';
export const MODULE_ID = /^[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/;
const ENTRYPOINT_EXTENSIONS = ['.js', '.mjs', '.ts'];

const checked = (check: (value: string) => void) => (value: string, ctx: z.RefinementCtx) => {
  try {
    check(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: err instanceof ConfigError ? err.rule : (err as Error).message });
  }
};

const manifestSchema = z.strictObject({
  module_id: z.string({ error: 'is required and must be a string' }).regex(MODULE_ID, 'must have the shape <namespace>:<name>'),
  version: z.string({ error: 'is required and must be a string' }).refine((v) => semver.valid(v) === v, 'must be a semantic version such as 1.2.0'),
  entrypoint: z
    .string({ error: 'is required and must be a string' })
    .min(1, 'must not be empty')
    .refine((v) => ENTRYPOINT_EXTENSIONS.some((ext) => v.endsWith(ext)), `must be a ${ENTRYPOINT_EXTENSIONS.join(', ')} file`),
  models: z
    .array(
      z.strictObject({
        api: z.string({ error: 'is required and must be a string' }).superRefine(checked((v) => parseApi(v))),
        model: z.string({ error: 'is required and must be a string' }).superRefine(checked((v) => checkModelName(v))),
      }),
      { error: 'is required and must be an array of {api, model}' },
    )
    .min(1, 'must list at least one model'),
  description: z.string({ error: 'must be a string' }).optional(),
  // APIs the module defines itself: the runtime serves `service` from `proto` and forwards each call to
  // the driver of the resource named in the request's `name` (plugins/MODULE-APIS.md).
  apis: z
    .array(
      z.strictObject({
        api: z.string({ error: 'is required and must be a string' }).superRefine(checked((v) => parseApi(v))),
        proto: z.string({ error: 'is required and must be a string' }).regex(/\.proto$/, 'must be a .proto file'),
        service: z
          .string({ error: 'is required and must be a string' })
          .regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/, 'must be a fully qualified service name such as acme.widget.v1.WidgetService'),
        // An API whose contract declares a Stop: sessions and StopAll stop it (RPC names of the service).
        actuator: z
          .strictObject({
            stop: z.string({ error: 'is required and must be the name of an RPC' }).min(1, 'must not be empty'),
            commands: z.array(z.string().min(1, 'must not be empty'), { error: 'is required and must be an array of RPC names' }),
          })
          .optional(),
      }),
      { error: 'must be an array of {api, proto, service}' },
    )
    .optional(),
});

export type ModuleManifest = z.output<typeof manifestSchema>;

/** A manifest with the absolute path of its folder and entrypoint. */
export interface ModulePackage {
  dir: string;
  manifest: ModuleManifest;
  entrypoint: string;
  /** Changes when module.json is rewritten: a changed module is reloaded. */
  signature: string;
}

/** Reads and validates `<dir>/module.json`. Throws a ConfigError naming the file, the field and the rule. */
export function readManifest(dir: string): ModulePackage {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(file, `is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new ConfigError(file, 'must be a JSON object');
  let manifest: ModuleManifest;
  try {
    manifest = parseConfig(manifestSchema, json, '');
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.path ? `${file} ${err.path}` : file, err.rule, err.value);
  }
  manifest.models.forEach((m, i) => {
    if (m.model.split(':').length !== 3 || !m.model.startsWith(`${manifest.module_id}:`)) {
      throw new ConfigError(
        `${file} models[${i}].model`,
        `must be a triplet <namespace>:<module>:<model> that starts with the module_id ${manifest.module_id}`,
        m.model,
      );
    }
  });
  const seen = new Set<string>();
  manifest.models.forEach((m, i) => {
    const key = `${m.api} ${m.model}`;
    if (seen.has(key)) throw new ConfigError(`${file} models[${i}]`, 'lists the same api and model twice', m);
    seen.add(key);
  });
  (manifest.apis ?? []).forEach((a, i) => {
    const proto = resolve(dir, a.proto);
    if (isAbsolute(a.proto) || relative(resolve(dir), proto).startsWith('..'))
      throw new ConfigError(`${file} apis[${i}].proto`, 'must be a path inside the module folder', a.proto);
    if (!existsSync(proto)) throw new ConfigError(`${file} apis[${i}].proto`, `names a file that does not exist (${proto})`, a.proto);
  });
  const entrypoint = resolve(dir, manifest.entrypoint);
  const inside = relative(resolve(dir), entrypoint);
  if (isAbsolute(manifest.entrypoint) || inside.startsWith('..')) {
    throw new ConfigError(`${file} entrypoint`, 'must be a path inside the module folder', manifest.entrypoint);
  }
  if (!existsSync(entrypoint) || !statSync(entrypoint).isFile()) {
    throw new ConfigError(`${file} entrypoint`, `names a file that does not exist (${entrypoint})`, manifest.entrypoint);
  }
  return { dir: resolve(dir), manifest, entrypoint, signature: `${statSync(file).mtimeMs}:${text.length}` };
}
