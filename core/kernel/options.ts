// Timing and concurrency of the kernel. The defaults suit a real machine; tests shorten them.
import type { InjectionToken } from 'tsyringe';
import { envMs } from '../serving/env.js';

export interface KernelOptions {
  /** How long one resource's construction may take before it is aborted (its worker ends). */
  configureTimeoutMs: number;
  /** How long one resource's close may take. */
  closeTimeoutMs: number;
  /** How many resources of one start level are constructed at a time. */
  maxConcurrentStarts: number;
  /** Backoff of rebuilds after a failed construction or a crash: initial delay, doubled up to max. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /**
   * How long a rebuilt resource must stay ready before its failure count (and so the backoff) starts
   * again from the beginning. Without it, a driver that crashes right after each start would be rebuilt
   * at the initial delay forever.
   */
  backoffResetMs: number;
  /** -debug: debug logs for everything, whatever the config says. */
  debug: boolean;
}

export const KernelOptions: InjectionToken<KernelOptions> = 'KernelOptions';

/** Defaults, overridable through PLATFORM_RESOURCE_CONFIGURE_TIMEOUT_MS and PLATFORM_RESOURCE_CLOSE_TIMEOUT_MS. */
export function defaultKernelOptions(overrides: Partial<KernelOptions> = {}): KernelOptions {
  return {
    configureTimeoutMs: envMs('PLATFORM_RESOURCE_CONFIGURE_TIMEOUT_MS', 60_000),
    closeTimeoutMs: envMs('PLATFORM_RESOURCE_CLOSE_TIMEOUT_MS', 10_000),
    maxConcurrentStarts: 10,
    backoffInitialMs: 1_000,
    backoffMaxMs: 60_000,
    backoffResetMs: 30_000,
    debug: false,
    ...overrides,
  };
}
