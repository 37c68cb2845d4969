// Turns config entries into resources the kernel can build: finds each model, runs its config validator
// (attributes plus implicit dependencies), and checks the dependency graph. Every problem becomes the
// error of the resource it touches; the other resources are unaffected.
import { validateAttributes } from '../../plugins/contract.js';
import { ConfigError } from '../../plugins/validation.js';
import type { ResourceEntry } from '../config/resource-entry.js';
import { analyzeGraph } from './resource-graph.js';
import type { ModelRegistry, RegisteredModel } from './model-registry.js';
import type { TypedDependency } from '../../plugins/api.js';

export interface ResolvedResource {
  /** Unique among resources: the name, or `name@path` for an entry that duplicates a name. */
  key: string;
  entry: ResourceEntry;
  model?: RegisteredModel;
  attributes?: unknown;
  /** depends_on plus the implicit dependencies the model's validator returned. */
  dependencies: string[];
  /** The implicit dependencies the model declared with their API (checked against the named resource). */
  typedDependencies?: TypedDependency[];
  /** A config error: the resource is reported but not built until its config changes. */
  error?: string;
  /** The same error with its path and rule apart (RobotService.GetConfig lists them). */
  configError?: ConfigError;
  /** Equal fingerprints mean the resource needs no rebuild (log level changes are applied in place). */
  fingerprint: string;
}

/** Explains a missing model better than "unknown", e.g. when its module is not loaded. */
export type MissingModelExplainer = (api: string, model: string) => string | undefined;

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function resolveOne(entry: ResourceEntry, registry: ModelRegistry, explain?: MissingModelExplainer): Omit<ResolvedResource, 'key' | 'fingerprint'> {
  if (entry.error) return { entry, dependencies: entry.dependsOn, error: entry.error.message, configError: entry.error };
  const model = registry.lookup(entry.api, entry.model);
  if (!model) {
    const reason = explain?.(entry.api, entry.model);
    const error = reason
      ? new ConfigError(`${entry.path}.model`, reason, entry.model)
      : !registry.hasApi(entry.api)
        ? new ConfigError(`${entry.path}.api`, `unknown api; known apis: ${registry.apis().join(', ')}`, entry.api)
        : new ConfigError(`${entry.path}.model`, `unknown model for ${entry.api}; known models: ${registry.modelsOf(entry.api).join(', ')}`, entry.model);
    return { entry, dependencies: entry.dependsOn, error: error.message, configError: error };
  }
  try {
    const { attributes, implicitDependencies, typedDependencies } = validateAttributes(model.definition, entry.attributes, `${entry.path}.attributes`);
    const dependencies = [...new Set([...entry.dependsOn, ...implicitDependencies])];
    return { entry, model, attributes, dependencies, typedDependencies };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { entry, model, dependencies: entry.dependsOn, error: err.message, configError: err };
  }
}

export function resolveResources(entries: readonly ResourceEntry[], registry: ModelRegistry, explain?: MissingModelExplainer): ResolvedResource[] {
  const seen = new Set<string>();
  const resolved: ResolvedResource[] = entries.map((entry) => {
    const key = seen.has(entry.name) ? `${entry.name}@${entry.path}` : entry.name;
    seen.add(entry.name);
    const result = resolveOne(entry, registry, explain);
    const fingerprint = stableJson({
      api: entry.api,
      model: entry.model,
      attributes: entry.attributes,
      dependencies: result.dependencies,
      error: result.error ?? null,
      module: result.model?.moduleId ?? null,
    });
    return { key, fingerprint, ...result };
  });
  // Graph problems are checked over the resources that have a name others can refer to.
  const named = resolved.filter((r) => r.key === r.entry.name);
  const byName = new Map(named.map((r) => [r.key, r]));
  const { cycles, missing } = analyzeGraph(named.map((r) => ({ name: r.key, dependencies: r.dependencies })));
  for (const resource of named) {
    if (resource.error) continue;
    const absent = missing.get(resource.key);
    const cycle = cycles.get(resource.key);
    const problem = absent
      ? new ConfigError(
          resource.entry.path,
          `depends on ${absent.map((d) => JSON.stringify(d)).join(', ')}, which ${absent.length > 1 ? 'are' : 'is'} not configured`,
          resource.key,
        )
      : cycle
        ? new ConfigError(resource.entry.path, `dependency cycle: ${cycle.join(' -> ')}`, resource.key)
        : wrongApi(resource, byName);
    resource.error = problem?.message;
    resource.configError = problem;
    if (resource.error) resource.fingerprint += `|${resource.error}`;
  }
  return resolved;
}

/**
 * A dependency declared with its API must name a resource of that API: a motor whose `board` names a
 * sensor is a config error of the motor, found now rather than at its first call.
 */
function wrongApi(resource: ResolvedResource, byName: ReadonlyMap<string, ResolvedResource>): ConfigError | undefined {
  for (const dependency of resource.typedDependencies ?? []) {
    const target = byName.get(dependency.name);
    if (target && target.entry.api !== dependency.api) {
      return new ConfigError(
        `${resource.entry.path}.attributes.${dependency.field}`,
        `must name a ${dependency.api}; ${JSON.stringify(dependency.name)} is a ${target.entry.api}`,
      );
    }
  }
  return undefined;
}
