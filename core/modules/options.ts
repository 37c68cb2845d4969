// How the runtime finds and loads modules. The defaults suit a real machine; tests shorten the backoff.
import type { InjectionToken } from 'tsyringe';
import { envMs } from '../serving/env.js';

export interface ModuleOptions {
  /** -untrusted-env: no module is loaded, and every modular resource says so. */
  untrusted: boolean;
  /** $PLATFORM_PLUGINS_DIR, which beats the config's module_dir. */
  pluginsDirEnv?: string;
  /** The config file, against whose folder a relative module_dir is resolved. */
  configPath?: string;
  home?: string;
  /** How long a module's entrypoint may take to load in its probe worker. */
  loadTimeoutMs: number;
  /** Backoff of reloads after a module failed to load: initial delay, doubled up to max. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Quiet time after the last change in the plugins folder before it is rescanned (a copy is many writes). */
  settleMs: number;
}

export const ModuleOptions: InjectionToken<ModuleOptions> = 'ModuleOptions';

/** Defaults; the load timeout is overridable through PLATFORM_MODULE_STARTUP_TIMEOUT_MS. */
export function defaultModuleOptions(overrides: Partial<ModuleOptions> = {}): ModuleOptions {
  return {
    untrusted: false,
    pluginsDirEnv: process.env.PLATFORM_PLUGINS_DIR || undefined,
    loadTimeoutMs: envMs('PLATFORM_MODULE_STARTUP_TIMEOUT_MS', 60_000),
    backoffInitialMs: 1_000,
    backoffMaxMs: 30_000,
    settleMs: 300,
    ...overrides,
  };
}
