// -dump-resources: every registered model as {api, model, attribute_schema}, sorted, as JSON.
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import type { ModelRegistry } from '../resource/registry.js';

export interface ResourceRegistration {
  api: string;
  model: string;
  attribute_schema: unknown;
}

export function describeRegistrations(registry: ModelRegistry): ResourceRegistration[] {
  return registry
    .list()
    .map(({ definition }) => ({
      api: definition.api,
      model: definition.model,
      attribute_schema: z.toJSONSchema(definition.attributes, { io: 'input', unrepresentable: 'any' }),
    }))
    .sort((a, b) => a.api.localeCompare(b.api) || a.model.localeCompare(b.model));
}

export function dumpResources(registry: ModelRegistry, path: string): void {
  writeFileSync(path, `${JSON.stringify(describeRegistrations(registry), null, 2)}\n`);
}
