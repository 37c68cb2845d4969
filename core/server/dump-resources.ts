// -dump-resources: every registered model, built-in and from the modules in the plugins folder, as a
// sorted JSON array of {api, model, attribute_schema}.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as z from 'zod';
import { loadModuleDefinition } from '../../plugins/host/entrypoint.js';
import { pluginsFolder, scanPluginsFolder, type PluginsFolderSource } from '../../plugins/host/plugins-folder.js';
import { probeEntrypoint } from '../../plugins/host/probe.js';
import { runnableModule } from '../../plugins/host/transpile.js';
import type { ModelRegistry } from '../resource/model-registry.js';

export interface ResourceRegistration {
  api: string;
  model: string;
  attribute_schema: unknown;
  module_id?: string;
}

export function describeRegistrations(registry: ModelRegistry): ResourceRegistration[] {
  return registry
    .list()
    .map(({ definition, moduleId }) => ({
      api: definition.api,
      model: definition.model,
      attribute_schema: z.toJSONSchema(definition.attributes, { io: 'input', unrepresentable: 'any' }),
      ...(moduleId ? { module_id: moduleId } : {}),
    }))
    .sort((a, b) => a.api.localeCompare(b.api) || a.model.localeCompare(b.model));
}

/**
 * Registers the models of every module found in the plugins folder. Each entrypoint is probed in a
 * throwaway worker first, as the runtime does; a module that fails is reported and skipped.
 */
export async function registerInstalledModules(registry: ModelRegistry, source: PluginsFolderSource, report: (line: string) => void): Promise<void> {
  const folder = pluginsFolder(source);
  for (const found of scanPluginsFolder(folder.path)) {
    if ('error' in found) {
      report(`skipping ${found.dir}: ${found.error.message}`);
      continue;
    }
    const { manifest } = found.package;
    try {
      const runnable = await runnableModule(found.package);
      const url = pathToFileURL(runnable.entrypoint).href;
      await probeEntrypoint(url, manifest, 60_000);
      const definition = await loadModuleDefinition(url, manifest);
      for (const model of definition.models) registry.register(model, manifest.module_id);
    } catch (err) {
      registry.unregisterModule(manifest.module_id);
      report(`skipping module ${manifest.module_id} ${manifest.version}: ${(err as Error).message}`);
    }
  }
}

export function dumpResources(registry: ModelRegistry, path: string): void {
  writeFileSync(path, `${JSON.stringify(describeRegistrations(registry), null, 2)}\n`);
}
