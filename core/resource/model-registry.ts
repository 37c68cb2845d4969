// The registry of models, by (api, model). Built-in drivers and module plugins register here through
// the same contract. Modules come and go at runtime, so the registry reports changes.
import { EventEmitter } from 'node:events';
import type { ModelDefinition } from '../../plugins/contract.js';
import { ConfigError } from '../../plugins/validation.js';

export interface RegisteredModel {
  definition: ModelDefinition;
  /** Set for models provided by a module; log lines and errors carry it. */
  moduleId?: string;
}

export class ModelRegistry extends EventEmitter<{ changed: [] }> {
  private readonly models = new Map<string, RegisteredModel>();

  private static key(api: string, model: string): string {
    return `${api}|${model}`;
  }

  /** Registers a model. Registering the same (api, model) twice is a mistake and throws now. */
  register(definition: ModelDefinition, moduleId?: string): void {
    const key = ModelRegistry.key(definition.api, definition.model);
    const existing = this.models.get(key);
    if (existing) {
      const owner = existing.moduleId ? `module ${existing.moduleId}` : 'a built-in';
      throw new ConfigError(`model ${definition.model}`, `is already registered for ${definition.api} by ${owner}`);
    }
    this.models.set(key, { definition, moduleId });
    this.emit('changed');
  }

  /** Removes every model a module registered; returns how many were removed. */
  unregisterModule(moduleId: string): number {
    let removed = 0;
    for (const [key, model] of this.models) {
      if (model.moduleId === moduleId) {
        this.models.delete(key);
        removed++;
      }
    }
    if (removed) this.emit('changed');
    return removed;
  }

  lookup(api: string, model: string): RegisteredModel | undefined {
    return this.models.get(ModelRegistry.key(api, model));
  }

  hasApi(api: string): boolean {
    for (const model of this.models.values()) if (model.definition.api === api) return true;
    return false;
  }

  modelsOf(api: string): string[] {
    return [...this.models.values()]
      .filter((m) => m.definition.api === api)
      .map((m) => m.definition.model)
      .sort();
  }

  apis(): string[] {
    return [...new Set([...this.models.values()].map((m) => m.definition.api))].sort();
  }

  list(): RegisteredModel[] {
    return [...this.models.values()];
  }
}
