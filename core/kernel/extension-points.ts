// What the kernel lets the rest of the runtime extend, declared in one list, in the manner of Backstage's
// createExtensionPoint: the kernel names each point and its type, the parts of the runtime that extend
// it provide an implementation, and the composition root (core/server/compose.ts) wires them, once. The
// kernel never calls up into a class that installed itself, and it knows no feature by name: the data
// manager, the module host and the packages are each just an implementation of a point here.
import type { InjectionToken } from 'tsyringe';
import type { LevelName } from '../config/log-rules.js';
import type { MachineConfig } from '../config/machine-config.js';
import type { ModelRegistry } from '../resource/model-registry.js';
import type { MissingModelExplainer } from '../resource/resolve-resources.js';
import type { ResourceEntry } from '../config/resource-entry.js';

export interface ExtensionPoint<T> {
  readonly id: string;
  /** Carries the implementation's type at compile time only. */
  readonly implementation?: T;
}

export function createExtensionPoint<T>(id: string): ExtensionPoint<T> {
  return { id };
}

/** What an entries step sees besides the entries: the config they came from and the models. */
export interface EntriesContext {
  config: MachineConfig;
  registry: ModelRegistry;
}

/** Changes entries in place before they are resolved; an error goes on the entry it concerns (entry.error). */
export type EntriesStep = (entries: ResourceEntry[], context: EntriesContext) => void;

/** First: values substituted into the entries' attributes (the installed packages' folders, ${packages.NAME}). */
export const entrySubstitution = createExtensionPoint<EntriesStep>('kernel.entries.substitution');

/** Then: entries completed from the others (the data manager's capture targets, from their service_configs). */
export const entryCompletion = createExtensionPoint<EntriesStep>('kernel.entries.completion');

/** Why a model is not registered (a module not in the config, not installed): the resource's error says it. */
export const missingModelExplanation = createExtensionPoint<MissingModelExplainer>('kernel.missing-model-explanation');

/** The log level of a resource whose model comes from a module (the module's log_level). */
export const moduleLogLevel = createExtensionPoint<(moduleId: string) => LevelName | undefined>('kernel.module-log-level');

/** The implementations provided for each extension point, in the order they were provided. */
export class KernelExtensions {
  private readonly provided = new Map<string, unknown[]>();

  provide<T>(point: ExtensionPoint<T>, implementation: T): void {
    const list = this.provided.get(point.id) ?? [];
    list.push(implementation);
    this.provided.set(point.id, list);
  }

  all<T>(point: ExtensionPoint<T>): readonly T[] {
    return (this.provided.get(point.id) ?? []) as T[];
  }

  /** The first answer any implementation of a point that answers a question gives. */
  firstAnswer<A extends unknown[], R>(point: ExtensionPoint<(...args: A) => R | undefined>, ...args: A): R | undefined {
    for (const answer of this.all(point)) {
      const value = answer(...args);
      if (value !== undefined) return value;
    }
    return undefined;
  }
}

/** The DI token of the runtime's one KernelExtensions. */
export const KERNEL_EXTENSIONS: InjectionToken<KernelExtensions> = 'KernelExtensions';
