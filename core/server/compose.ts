// Wires the runtime with the DI container: every service is registered under its token and built in
// the order of its dependencies.
import 'reflect-metadata';
import { container as root, type DependencyContainer } from 'tsyringe';
import { builtinModels } from '../../drivers/index.js';
import { ConfigFile } from '../config/config-file.js';
import { dataManagerModel } from '../shared/data-manager-model.js';
import { Machine } from '../kernel/machine.js';
import { defaultKernelOptions, KernelOptions } from '../kernel/options.js';
import { LOG_SINK, LogSink } from '../logging/sink.js';
import { ModuleHost } from '../modules/module-host.js';
import { ONLINE_MACHINE, OnlineMachine } from '../online/online-machine.js';
import { defaultModuleOptions, ModuleOptions } from '../modules/options.js';
import { ModelRegistry } from '../shared/model-registry.js';
import { flag, stringFlag, type Flags } from './flags.js';
import { CONFIG_FILE, Runtime, RUNTIME_FLAGS } from './runtime.js';

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
    useValue: defaultKernelOptions({ debug: flag(flags, 'debug'), allowInsecureCreds: flag(flags, 'allow-insecure-creds') }),
  });
  container.register(ModelRegistry, { useValue: registryWithBuiltins() });
  container.register(ModuleOptions, { useValue: defaultModuleOptions({ untrusted: flag(flags, 'untrusted-env'), configPath }) });
  container.registerSingleton(Machine);
  container.registerSingleton(ModuleHost);
  container.registerSingleton(Runtime);
  return container;
}
