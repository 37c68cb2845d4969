// Gathers what the data manager needs from the rest of the machine config: every resource's data_manager
// service_configs (checked against the capture methods of its api and model), the selective syncer, and
// the cloud section. The result goes into the data manager entry's internal attributes and dependencies,
// so a change to any resource's capture config rebuilds the data manager (and only it).
import { homedir } from 'node:os';
import { ConfigError, configErrorsFromZod } from '../../plugins/validation.js';
import type { CloudLinkSettings } from '../cloud-link/link-settings.js';
import type { ResourceEntry } from '../config/resource-entry.js';
import { captureMethodsOf, DATA_MANAGER_SERVICE_TYPE } from '../config/service-configs.js';
import type { ModelRegistry } from './model-registry.js';
import { DATA_MANAGER_API, dataManagerUserAttributes, type CaptureTargetConfig, type DataManagerAttributes } from '../config/data-manager-attributes.js';
import { builtinCaptureMethods } from './capture-methods.js';

/** The capture methods a resource's api and model offer, by name: built-in kind, or the model's declaration. */
function methodsFor(
  entry: ResourceEntry,
  registry: ModelRegistry,
): Map<string, { kind: 'tabular' | 'binary'; driverMethod?: string; check?: (p: Record<string, unknown>) => string | undefined }> {
  const methods = new Map<string, { kind: 'tabular' | 'binary'; driverMethod?: string; check?: (p: Record<string, unknown>) => string | undefined }>();
  for (const [name, m] of Object.entries(builtinCaptureMethods[entry.api] ?? {})) methods.set(name, { kind: m.kind, check: m.checkParams });
  const declared = registry.lookup(entry.api, entry.model)?.definition.captureMethods ?? {};
  for (const [name, m] of Object.entries(declared)) methods.set(name, { kind: m.kind, driverMethod: m.driverMethod });
  return methods;
}

/** The capture targets of one entry; sets entry.error (the entry is then not built) for a method its api lacks. */
function targetOf(entry: ResourceEntry, registry: ModelRegistry): CaptureTargetConfig | undefined {
  const configured = captureMethodsOf(entry.serviceConfigs);
  if (configured.length === 0) return undefined;
  const index = entry.serviceConfigs.findIndex((c) => c.type === DATA_MANAGER_SERVICE_TYPE);
  const base = `${entry.path}.service_configs[${index}].attributes.capture_methods`;
  // A model from a module that is not loaded yet: resolve reports the missing model; check methods later.
  const modelKnown = registry.lookup(entry.api, entry.model) !== undefined;
  const available = methodsFor(entry, registry);
  const target: CaptureTargetConfig = { resource: entry.name, api: entry.api, methods: [] };
  for (const [i, m] of configured.entries()) {
    const method = available.get(m.method);
    if (!method) {
      if (!modelKnown) continue;
      const known = [...available.keys()].sort();
      entry.error = new ConfigError(
        `${base}[${i}].method`,
        `unknown capture method for ${entry.api}; ${known.length ? `known: ${known.join(', ')}` : 'this api has no capture methods'}`,
        m.method,
      );
      return undefined;
    }
    const broken = method.check?.(m.additional_params);
    if (broken) {
      entry.error = new ConfigError(`${base}[${i}].additional_params`, broken, m.additional_params);
      return undefined;
    }
    if (m.disabled) continue;
    target.methods.push({
      method: m.method,
      kind: method.kind,
      driverMethod: method.driverMethod,
      frequencyHz: m.capture_frequency_hz,
      additionalParams: m.additional_params,
      tags: m.tags,
    });
  }
  return target.methods.length ? target : undefined;
}

export function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? homedir() + path.slice(1) : path;
}

/**
 * Completes the data manager entry (if any) in place: validates its own attributes, then adds `_targets`,
 * `_cloud`, `_tracing` and the dependencies on every captured resource and the selective syncer. Errors land on the
 * entries they concern.
 */
export function assembleDataManager(
  entries: ResourceEntry[],
  registry: ModelRegistry,
  cloud: CloudLinkSettings | undefined,
  tracing?: DataManagerAttributes['_tracing'],
): void {
  const managers = entries.filter((e) => !e.error && e.api === DATA_MANAGER_API);
  for (const extra of managers.slice(1))
    extra.error = new ConfigError(`${extra.path}.api`, `only one data manager per machine; ${managers[0].path} is the first`, extra.api);
  const targets = entries
    .filter((e) => !e.error)
    .map((e) => targetOf(e, registry))
    .filter((t): t is CaptureTargetConfig => t !== undefined);
  const manager = managers[0];
  if (!manager) return;
  const parsed = dataManagerUserAttributes.safeParse(manager.attributes);
  if (!parsed.success) {
    manager.error = configErrorsFromZod(parsed.error, `${manager.path}.attributes`, manager.attributes)[0];
    return;
  }
  const attributes = parsed.data;
  const captured = attributes.capture_disabled ? [] : targets;
  manager.attributes = {
    ...manager.attributes,
    capture_dir: expandHome(attributes.capture_dir),
    additional_sync_paths: attributes.additional_sync_paths.map(expandHome),
    _targets: captured,
    _cloud: cloud,
    _tracing: tracing,
  };
  const needed = [...captured.map((t) => t.resource), ...(attributes.selective_syncer_name ? [attributes.selective_syncer_name] : [])];
  manager.dependsOn = [...new Set([...manager.dependsOn, ...needed])];
}
