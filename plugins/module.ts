// The module side of the plugin contract. A module's entrypoint declares its models with the same
// `defineModel` as the built-ins, grouped by `defineModule`.
//
// A module lives outside this package (in the plugins folder), where `import 'zod'` or an import of this
// file would not resolve. So the entrypoint's default export may be a function that receives the SDK:
//
//   export default ({ defineModule, defineModel, z }) => defineModule({ models: [defineModel({...})] });
//
// Code inside this package (tests, bundled examples) may also export the ModuleDefinition directly.
import * as z from 'zod';
import { defineDriver, defineModel, type ModelDefinition } from './contract.js';
import * as errors from './errors.js';
import { ConfigError } from './validation.js';

export interface ModuleDefinition {
  readonly models: readonly ModelDefinition[];
}

/** What a module entrypoint's default-export function receives. */
export interface ModuleSdk {
  defineModule: typeof defineModule;
  defineModel: typeof defineModel;
  defineDriver: typeof defineDriver;
  z: typeof z;
  errors: typeof errors;
}

/** Declares the models of a module. Misuse (no models, a duplicate) throws now. */
export function defineModule(definition: ModuleDefinition): ModuleDefinition {
  if (!definition || !Array.isArray(definition.models) || definition.models.length === 0) {
    throw new ConfigError('models', 'a module must declare at least one model (defineModule({ models: [defineModel(...)] }))');
  }
  const seen = new Set<string>();
  definition.models.forEach((model, i) => {
    if (!model || typeof model !== 'object' || typeof model.api !== 'string' || typeof model.model !== 'string') {
      throw new ConfigError(`models[${i}]`, 'must be a model declared with defineModel');
    }
    const key = `${model.api} ${model.model}`;
    if (seen.has(key)) throw new ConfigError(`models[${i}]`, `declares ${model.model} for ${model.api} twice`);
    seen.add(key);
  });
  return Object.freeze({ models: Object.freeze([...definition.models]) });
}

export const moduleSdk: ModuleSdk = Object.freeze({ defineModule, defineModel, defineDriver, z, errors });

/** An entrypoint's default export: the definition itself, or a function of the SDK returning it. */
export type ModuleEntrypointExport = ModuleDefinition | ((sdk: ModuleSdk) => ModuleDefinition | Promise<ModuleDefinition>);
