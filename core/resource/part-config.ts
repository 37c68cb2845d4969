// A machine part's config as the cloud stores it: the same JSON as a local config file, without `cloud`.
// The cloud validates it on save with the runtime's own code (top-level schema, resource entries, model
// registry, dependency graph), so a saved config gets exactly the messages the runtime would log. Only
// what depends on the machine itself is left to the machine: models that come from modules, since
// which modules are installed is known only there.
import { ConfigError } from '../../plugins/validation.js';
import { assembleDataManager } from './data-manager-assemble.js';
import { InvalidConfigError, parseMachineConfig, type MachineConfig } from '../config/machine-config.js';
import type { ModelRegistry } from './model-registry.js';
import { resolveResources } from './resolve-resources.js';
import { referencedPackages } from '../config/package-config.js';
import { parseResourceEntries } from '../config/resource-entry.js';

/** A modular model (`<namespace>:<module>:<model>`) is resolved on the machine, where its module lives. */
const isModularModel = (model: string): boolean => model.split(':').length === 3;

export type PartConfigCheck = { ok: true; config: MachineConfig } | { ok: false; errors: string[] };

/**
 * Validates a part config against the built-in models of `registry`: every error (top-level and
 * per-resource), each naming its path and rule, or the parsed config.
 */
export function checkPartConfig(doc: unknown, registry: ModelRegistry): PartConfigCheck {
  let config: MachineConfig;
  try {
    config = parseMachineConfig(doc);
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    const errors = err.errors.map((e) => e.message);
    // A top-level mistake (a bad session.heartbeat_window) must not hide the resources' own errors (a
    // motor's missing attribute): those are checked on the resource sections alone, when they parse.
    const resourcesOnly = resourceSections(doc);
    if (!resourcesOnly) return { ok: false, errors };
    let resources: MachineConfig;
    try {
      resources = parseMachineConfig(resourcesOnly);
    } catch (again) {
      if (!(again instanceof InvalidConfigError)) throw again;
      // Their schema errors are in the list already.
      return { ok: false, errors };
    }
    return { ok: false, errors: [...errors, ...resourceErrors(resources, registry)] };
  }
  const errors: string[] = [];
  if (config.cloud) errors.push(new ConfigError('cloud', "must not be saved in the cloud: a machine's credentials stay in its own file").message);
  errors.push(...resourceErrors(config, registry));
  return errors.length ? { ok: false, errors } : { ok: true, config };
}

/** The parts of a config document that the resources' checks read; undefined when it is no object. */
function resourceSections(doc: unknown): Record<string, unknown> | undefined {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const { components, services, packages } = doc as Record<string, unknown>;
  return { components, services, packages };
}

/** Every per-resource error the runtime would report for `config`'s entries. */
function resourceErrors(config: MachineConfig, registry: ModelRegistry): string[] {
  const errors: string[] = [];
  const entries = parseResourceEntries(config.components, config.services);
  // The data manager's attributes and every resource's service_configs, as the runtime checks them.
  assembleDataManager(entries, registry, undefined);
  // ${packages.NAME} must name a listed package; whether it can be installed is the machine's to find out.
  const listed = config.packages.map((p) => p.name);
  for (const entry of entries) {
    for (const name of referencedPackages(entry.attributes)) {
      if (!listed.includes(name)) {
        errors.push(
          new ConfigError(`${entry.path}.attributes`, `\${packages.${name}} names no package in "packages" (listed: ${listed.join(', ') || 'none'})`).message,
        );
      }
    }
  }
  for (const resource of resolveResources(entries, registry)) {
    if (!resource.error) continue;
    // The model is unknown here because it comes from a module: whether that module is installed is
    // the machine's to judge (it reports the resource's error in its status and logs).
    if (!resource.model && !resource.entry.error && isModularModel(resource.entry.model)) continue;
    errors.push(resource.error);
  }
  return errors;
}
