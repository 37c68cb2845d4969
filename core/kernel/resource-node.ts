// The kernel's record of one configured resource: its resolved config, its worker while it runs, and
// its state (SPEC.md / FACTS.md resource states) with the error and time of the last change.
import type { LevelName } from '../config/log-levels.js';
import type { ResolvedResource } from '../resource/resolve-resources.js';
import type { DriverHandle } from '../workers/driver-hosting.js';

export type ResourceState = 'unconfigured' | 'configuring' | 'ready' | 'removing' | 'unhealthy';

export interface ResourceStatus {
  key: string;
  name: string;
  api: string;
  model: string;
  moduleId?: string;
  state: ResourceState;
  error?: string;
  lastUpdated: Date;
  /** How many times the resource has been constructed. */
  revision: number;
}

export class ResourceNode {
  state: ResourceState = 'unconfigured';
  error?: string;
  lastUpdated = new Date();
  revision = 0;
  /** The driver's handle while it runs (a worker thread, or the main thread in platform-micro-server). */
  worker?: DriverHandle;
  logLevel: LevelName = 'info';
  /** Consecutive failures (constructions or crashes), for the rebuild backoff. */
  failures = 0;
  retry?: NodeJS.Timeout;
  /** Resets `failures` once the resource has stayed ready for KernelOptions.backoffResetMs. */
  settle?: NodeJS.Timeout;

  constructor(public spec: ResolvedResource) {}

  get key(): string {
    return this.spec.key;
  }

  status(): ResourceStatus {
    const { entry, model } = this.spec;
    return {
      key: this.key,
      name: entry.name,
      api: entry.api,
      model: entry.model,
      moduleId: model?.moduleId,
      state: this.state,
      error: this.error,
      lastUpdated: this.lastUpdated,
      revision: this.revision,
    };
  }
}
