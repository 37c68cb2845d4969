// Parts of a config that a user may expect to matter for modules but that do not: said as warnings.
import type { MachineConfig } from '../config/machine-config.js';

/** The module a model belongs to, if it is a module's triplet `<namespace>:<module>:<model>`. */
export const moduleIdOf = (model: string): string | undefined => {
  const parts = model.split(':');
  return parts.length === 3 ? `${parts[0]}:${parts[1]}` : undefined;
};

interface ModularEntry {
  path: string;
  name: string;
  model: string;
  moduleId: string;
  logConfiguration?: unknown;
}

/** Resource entries whose model is a module's. Entries are raw here: the kernel validates them. */
export function modularEntries(config: MachineConfig): ModularEntry[] {
  const pick = (section: 'components' | 'services') =>
    config[section].flatMap((raw, i) => {
      const entry = raw as { name?: unknown; model?: unknown; log_configuration?: unknown } | null;
      const moduleId = entry && typeof entry.model === 'string' ? moduleIdOf(entry.model) : undefined;
      if (!entry || !moduleId) return [];
      return [{ path: `${section}[${i}]`, name: String(entry.name), model: String(entry.model), moduleId, logConfiguration: entry.log_configuration }];
    });
  return [...pick('components'), ...pick('services')];
}

export interface ConfigNote {
  /** Notes with the same key are said once while they last. */
  key: string;
  message: string;
  fields: Record<string, unknown>;
}

export function configNotes(config: MachineConfig, untrusted: boolean): ConfigNote[] {
  const notes: ConfigNote[] = [];
  const entries = modularEntries(config);
  if (untrusted && (config.modules.length || entries.length)) {
    const ids = [...new Set([...config.modules.map((m) => m.module_id), ...entries.map((e) => e.moduleId)])];
    notes.push({
      key: 'untrusted',
      message: `modules are disabled by -untrusted-env: ${ids.join(', ')} not loaded; their resources are not built and report why`,
      fields: { modules: ids },
    });
  }
  for (const entry of entries) {
    if (entry.logConfiguration === undefined) continue;
    notes.push({
      key: `log_configuration:${entry.path}:${entry.model}`,
      message: `${entry.path}.log_configuration is not used for modular resources: the level of ${entry.name} comes from log_level on the modules entry of ${entry.moduleId}`,
      fields: { resource: entry.name, module_id: entry.moduleId },
    });
  }
  return notes;
}
