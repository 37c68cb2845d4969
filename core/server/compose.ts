// Wires the runtime with the DI container: every service is registered under its token and built in
// the order of its dependencies.
import 'reflect-metadata';
import { container as root, type DependencyContainer } from 'tsyringe';
import { builtinModels } from '../../drivers/index.js';
import { ConfigFile } from '../config/config-file.js';
import { dataManagerModel } from '../resource/data-manager-model.js';
import { Machine } from '../kernel/machine.js';
import { DRIVER_HOSTING } from '../workers/driver-hosting.js';
import { workerHosting } from '../workers/driver-worker.js';
import { entryCompletion, entrySubstitution, KERNEL_EXTENSIONS, KernelExtensions } from '../kernel/extension-points.js';
import { defaultKernelOptions, KernelOptions } from '../kernel/options.js';
import { linkSettingsOf } from '../cloud-link/link-settings.js';
import { assembleDataManager } from '../resource/data-manager-assemble.js';
import { LOG_SINK, LogSink } from '../logging/sink.js';
import { ModuleHost, provideModuleHostExtensions } from '../modules/module-host.js';
import { ONLINE_MACHINE, OnlineMachine } from '../online/online-machine.js';
import { defaultModuleOptions, ModuleOptions } from '../modules/options.js';
import { ModelRegistry } from '../resource/model-registry.js';
import { flag, stringFlag, type Flags } from './flags.js';
import { CONFIG_FILE, Runtime, RUNTIME_FLAGS } from './runtime.js';
import { workerTracingOf } from './machine-tracing.js';

export function registryWithBuiltins(): ModelRegistry {
  const registry = new ModelRegistry();
  for (const model of builtinModels) registry.register(model);
  // Built-in services that live in core/ rather than drivers/ (they reach beyond one device).
  registry.register(dataManagerModel);
  return registry;
}

export async function composeRuntime(flags: Flags, configPath: string): Promise<DependencyContainer> {
  const container = root.createChildContainer();
  const sink = await LogSink.create({ logFile: stringFlag(flags, 'log-file') });
  container.register(LOG_SINK, { useValue: sink });
  container.register(RUNTIME_FLAGS, { useValue: flags });
  const file = new ConfigFile(configPath);
  const online = OnlineMachine.forFile(file, sink, { allowInsecureCreds: flag(flags, 'allow-insecure-creds') });
  container.register(CONFIG_FILE, { useValue: online?.config ?? file });
  if (online) container.register(ONLINE_MACHINE, { useValue: online });
  container.register(KernelOptions, {
    useValue: defaultKernelOptions({ debug: flag(flags, 'debug') }),
  });
  container.register(ModelRegistry, { useValue: registryWithBuiltins() });
  container.register(ModuleOptions, { useValue: defaultModuleOptions({ untrusted: flag(flags, 'untrusted-env'), configPath }) });
  container.register(KERNEL_EXTENSIONS, { useValue: kernelExtensions(container, flag(flags, 'allow-insecure-creds'), flag(flags, 'output-telemetry')) });
  // Each driver in its own worker thread: a driver that crashes takes only its thread down.
  container.register(DRIVER_HOSTING, { useValue: workerHosting });
  container.registerSingleton(Machine);
  container.registerSingleton(ModuleHost);
  container.registerSingleton(Runtime);
  return container;
}

/**
 * The one place where the kernel's extension points (core/kernel/extension-points.ts) get their
 * implementations, in order: the packages' folders are substituted, then the data manager is completed
 * from the other entries, and the module host explains missing models and gives modules' log levels. The
 * kernel consults them only while it applies a config, after every service here exists, so each is
 * resolved when called.
 */
function kernelExtensions(container: DependencyContainer, allowInsecureCreds: boolean, outputTelemetry: boolean): KernelExtensions {
  const extensions = new KernelExtensions();
  extensions.provide(entrySubstitution, (entries) => container.resolve(Runtime).prepareEntries(entries));
  // The data manager, an ordinary built-in: its capture targets and its link to the cloud come from the config.
  extensions.provide(entryCompletion, (entries, { config, registry }) =>
    assembleDataManager(entries, registry, linkSettingsOf(config.cloud, allowInsecureCreds), workerTracingOf(config.tracing, outputTelemetry)),
  );
  provideModuleHostExtensions(extensions, () => container.resolve(ModuleHost));
  return extensions;
}
