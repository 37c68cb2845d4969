// The body of a throwaway worker that loads a module's entrypoint before the main thread does, so that
// an entrypoint that throws, exits or never returns ends this worker and not the runtime.
import { serializeError, type SerializedError } from '../errors.js';
import { loadModuleDefinition } from './entrypoint.js';
import type { ModuleManifest } from './manifest.js';

export interface ProbeTask {
  url: string;
  manifest: ModuleManifest;
}

export type ProbeOutcome = { ok: true; models: { api: string; model: string; driver: string }[] } | { ok: false; error: SerializedError };

export default async function probe(task: ProbeTask): Promise<ProbeOutcome> {
  try {
    const definition = await loadModuleDefinition(task.url, task.manifest);
    return { ok: true, models: definition.models.map((m) => ({ api: m.api, model: m.model, driver: m.driver.href })) };
  } catch (err) {
    return { ok: false, error: serializeError(err) };
  }
}
