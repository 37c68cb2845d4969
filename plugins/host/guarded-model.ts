// A module's attribute schema and implicitDependencies run on the main thread each time the config is
// resolved. If they throw (a bug in the module), that must become a config error of the resource, not
// an exception that stops the whole reconfiguration.
import * as z from 'zod';
import type { ModelDefinition } from '../contract.js';
import { ConfigError } from '../validation.js';

function guardSchema(schema: z.ZodType, model: string): z.ZodType {
  return new Proxy(schema, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'safeParse' || typeof value !== 'function') return value;
      return (input: unknown, ...rest: unknown[]) => {
        try {
          return value.call(target, input, ...rest);
        } catch (err) {
          const message = `the attribute validator of ${model} threw: ${(err as Error).message}`;
          return { success: false, error: new z.ZodError([{ code: 'custom', message, path: [], input }]) };
        }
      };
    },
  });
}

/** The same model, with its main-thread code unable to throw anything but a ConfigError. */
export function guardModel(definition: ModelDefinition): ModelDefinition {
  const { implicitDependencies, model } = definition;
  return Object.freeze({
    ...definition,
    attributes: guardSchema(definition.attributes, model),
    implicitDependencies: implicitDependencies
      ? (attributes: unknown) => {
          let names: unknown;
          try {
            names = implicitDependencies(attributes);
          } catch (err) {
            throw new ConfigError(`model ${model}`, `its implicitDependencies threw: ${(err as Error).message}`);
          }
          if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) {
            throw new ConfigError(`model ${model}`, 'its implicitDependencies must return an array of resource names');
          }
          return names as string[];
        }
      : undefined,
  });
}
