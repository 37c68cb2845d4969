// Loads a module's entrypoint and checks that it declares exactly the models its module.json lists.
// The same code runs in the throwaway probe worker and then on the main thread.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineModule, moduleSdk, type ModuleDefinition, type ModuleEntrypointExport } from '../module.js';
import { ConfigError } from '../validation.js';
import type { ModuleManifest } from './manifest.js';

/** Why an ESM entrypoint fails to parse as CommonJS, in words a module author can act on. */
function explainLoadError(err: unknown): Error {
  const error = err instanceof Error ? err : new Error(String(err));
  if (error instanceof SyntaxError && /import statement|export|Unexpected token/.test(error.message)) {
    error.message += ' (an ESM entrypoint needs the .mjs extension or a package.json with "type": "module" in the module folder)';
  }
  return error;
}

/** Imports `url` (an entrypoint, possibly with a cache-busting query) and validates what it declares. */
export async function loadModuleDefinition(url: string, manifest: ModuleManifest): Promise<ModuleDefinition> {
  let exported: ModuleEntrypointExport | undefined;
  try {
    exported = ((await import(url)) as { default?: ModuleEntrypointExport }).default;
  } catch (err) {
    throw explainLoadError(err);
  }
  if (exported === undefined || exported === null) {
    throw new ConfigError(
      'entrypoint',
      'must have a default export: defineModule({ models }) or a function (sdk) => defineModule({ models })',
      manifest.entrypoint,
    );
  }
  const declared = typeof exported === 'function' ? await exported(moduleSdk) : exported;
  const definition = defineModule(declared);
  const listed = new Set(manifest.models.map((m) => `${m.api} ${m.model}`));
  const found = new Set(definition.models.map((m) => `${m.api} ${m.model}`));
  for (const model of definition.models) {
    if (!listed.has(`${model.api} ${model.model}`)) {
      throw new ConfigError('module.json models', `does not list ${model.model} for ${model.api}, which the entrypoint declares`);
    }
    if (!(model.driver instanceof URL)) throw new ConfigError(`model ${model.model}: driver`, 'must be a URL, e.g. new URL("./driver.js", import.meta.url)');
    if (model.driver.protocol === 'file:' && !existsSync(fileURLToPath(model.driver))) {
      throw new ConfigError(`model ${model.model}: driver`, `names a file that does not exist (${fileURLToPath(model.driver)})`);
    }
  }
  for (const m of manifest.models) {
    if (!found.has(`${m.api} ${m.model}`)) throw new ConfigError('module.json models', `lists ${m.model} for ${m.api}, which the entrypoint does not declare`);
  }
  return definition;
}
