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
import { Runtime, RUNTIME_FLAGS } from './runtime.js';
import { ConfigReloader, configPreparation, configSettlement } from './config-reloader.js';
import { PackageChecks } from './package-checks.js';
import { MachinePackages } from '../packages/machine-packages.js';
import { PackageStore } from '../packages/package-store.js';
import { Sessions } from '../session/sessions.js';
import { machineSessions } from '../session/machine-sessions.js';
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
  if (online) container.register(ONLINE_MACHINE, { useValue: online });
  container.register(KernelOptions, {
    useValue: defaultKernelOptions({ debug: flag(flags, 'debug') }),
  });
  container.register(ModelRegistry, { useValue: registryWithBuiltins() });
  container.register(ModuleOptions, { useValue: defaultModuleOptions({ untrusted: flag(flags, 'untrusted-env'), configPath }) });
  const extensions = kernelExtensions(container, flag(flags, 'allow-insecure-creds'), flag(flags, 'output-telemetry'));
  container.register(KERNEL_EXTENSIONS, { useValue: extensions });
  // Each driver in its own worker thread: a driver that crashes takes only its thread down.
  container.register(DRIVER_HOSTING, { useValue: workerHosting });
  container.registerSingleton(Machine);
  container.registerSingleton(ModuleHost);
  const machine = container.resolve(Machine);
  const reloader = new ConfigReloader(online?.config ?? file, machine, sink, extensions, {
    debug: flag(flags, 'debug'),
    revealDiffs: flag(flags, 'reveal-sensitive-config-diffs'),
  });
  container.register(ConfigReloader, { useValue: reloader });
  const levelOf = (logger: string) => () => reloader.levelOf(logger);
  container.register(Sessions, {
    useValue: machineSessions(machine, () => reloader.loaded?.config.session, sink.logger('platform.session', levelOf('platform.session'))),
  });
  const packages = new MachinePackages(new PackageStore(), sink.logger('platform.packages', levelOf('platform.packages')), flag(flags, 'allow-insecure-creds'));
  container.register(PackageChecks, { useValue: new PackageChecks(packages, machine, reloader, sink.logger('platform.server', levelOf('platform.server'))) });
  container.registerSingleton(Runtime);
  return container;
}

/**
 * The one place where the kernel's extension points (core/kernel/extension-points.ts) and the config
 * reloader's (core/server/config-reloader.ts) get their implementations, in order: the packages' folders
 * are substituted, then the data manager is completed from the other entries, and the module host
 * explains missing models and gives modules' log levels. The kernel and the reloader consult them only
 * while they apply a config, after every service here exists, so each is resolved when called.
 */
function kernelExtensions(container: DependencyContainer, allowInsecureCreds: boolean, outputTelemetry: boolean): KernelExtensions {
  const extensions = new KernelExtensions();
  extensions.provide(entrySubstitution, (entries) => container.resolve(PackageChecks).packages.prepare(entries));
  // The data manager, an ordinary built-in: its capture targets and its link to the cloud come from the config.
  extensions.provide(entryCompletion, (entries, { config, registry }) =>
    assembleDataManager(entries, registry, linkSettingsOf(config.cloud, allowInsecureCreds), workerTracingOf(config.tracing, outputTelemetry)),
  );
  provideModuleHostExtensions(extensions, () => container.resolve(ModuleHost));
  // A config, at start and at each change: serve on a moved bind_address, load the modules (their models
  // must be registered before the resources that use them are resolved), install the packages (the running
  // resources keep the installed versions while the new ones download); after the machine applied it,
  // prune the packages no longer used and schedule their next check.
  extensions.provide(configPreparation, (next, previous) => container.resolve(Runtime).followBindAddress(next, previous));
  extensions.provide(configPreparation, (next) => container.resolve(ModuleHost).apply(next.config));
  extensions.provide(configPreparation, (next) => container.resolve(PackageChecks).packages.install(next.config));
  extensions.provide(configSettlement, () => container.resolve(PackageChecks).packages.prune());
  extensions.provide(configSettlement, () => container.resolve(PackageChecks).schedule());
  return extensions;
}
