// The runtime's side of modules: finds module folders in the plugins folder, loads the ones the config's
// `modules` entries select (each first in a throwaway worker, then on the main thread), registers their
// models, follows the folder for added and removed modules, reloads a module that failed with backoff,
// and tells the Machine why a modular resource cannot be built and at which level its module logs.
// Drivers of modular resources run in their own workers, built by the Machine like built-ins.
import 'reflect-metadata';
import { watch, type FSWatcher } from 'chokidar';
import { mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { inject, injectable } from 'tsyringe';
import { loadModuleDefinition } from '../../plugins/host/entrypoint.js';
import { guardModel } from '../../plugins/host/guarded-model.js';
import type { ModulePackage } from '../../plugins/host/manifest.js';
import { pluginsFolder, scanPluginsFolder, type FoundFolder } from '../../plugins/host/plugins-folder.js';
import { probeEntrypoint } from '../../plugins/host/probe.js';
import { runnableModule } from '../../plugins/host/transpile.js';
import type { MachineConfig, ModuleEntry } from '../config/machine-config.js';
import type { ModuleApi } from '../grpc/module-apis.js';
import { resolve as resolvePath } from 'node:path';
import { Machine } from '../kernel/machine.js';
import { missingModelExplanation, moduleLogLevel, type KernelExtensions } from '../kernel/extension-points.js';
import { KernelOptions } from '../kernel/options.js';
import { compileLogPattern, levelFor, type LevelName, type LogSettings } from '../config/log-rules.js';
import { LOG_SINK, type LogSink } from '../logging/sink.js';
import { ModelRegistry } from '../resource/model-registry.js';
import { configNotes, moduleIdOf } from './config-notes.js';
import { CrashGuard, stackTouches } from './crash-guard.js';
import { ModuleOptions } from './options.js';
import { selectModules, type ModuleSelection } from './selection.js';

interface Failure {
  kind: 'failed to load' | 'crashed';
  message: string;
  attempts: number;
  /** The module.json it failed with: a changed folder is retried at once. */
  signature: string;
  retryInMs: number;
  timer?: NodeJS.Timeout;
  due: boolean;
}

interface ModuleRecord {
  selection: ModuleSelection;
  /** `root` is the folder the loaded code runs from (a transpiled copy for TypeScript). */
  loaded?: { package: ModulePackage; models: string[]; root: string; at: number };
  failure?: Failure;
  /** The selection problem last logged, so that it is logged once. */
  reported?: string;
  /** Crashes in a row, each soon after its load: a module that keeps crashing backs off further each time. */
  crashes?: number;
}

@injectable()
export class ModuleHost {
  private readonly records = new Map<string, ModuleRecord>();
  private queue: Promise<unknown> = Promise.resolve();
  private entries: readonly ModuleEntry[] = [];
  private folder: string;
  private watched?: { path: string; watcher: FSWatcher };
  private settleTimer?: NodeJS.Timeout;
  private found: FoundFolder[] = [];
  private generation = 0;
  private closed = false;
  private warned = new Set<string>();
  private logSettings: LogSettings;
  private readonly guard = new CrashGuard(
    (error) => [...this.records.values()].find((r) => r.loaded && stackTouches(error.stack, r.loaded.root))?.selection.moduleId,
    (moduleId, error) => void this.enqueue(() => this.crashed(moduleId, error)),
  );
  private readonly log;
  private apiListener: (apis: ModuleApi[]) => void = () => undefined;

  constructor(
    @inject(Machine) private readonly machine: Machine,
    @inject(ModelRegistry) private readonly registry: ModelRegistry,
    @inject(LOG_SINK) sink: LogSink,
    @inject(ModuleOptions) private readonly options: ModuleOptions,
    @inject(KernelOptions) private readonly kernel: KernelOptions,
  ) {
    this.logSettings = { debug: kernel.debug, rules: [] };
    // The runtime's own lines about modules follow -debug, `debug` and the `log` rules like other loggers.
    this.log = sink.logger('platform.modules', () => levelFor('platform.modules', this.logSettings));
    this.folder = pluginsFolder({ env: options.pluginsDirEnv, configPath: options.configPath, home: options.home }).path;
  }

  /** The log level of a module's resources (its entry's log_level), for the kernel's moduleLogLevel point. */
  moduleLogLevel(moduleId: string): LevelName | undefined {
    return this.records.get(moduleId)?.selection.entry.log_level;
  }

  /**
   * Takes a config's `modules` and `module_dir`. Called before the Machine applies the same config, so
   * that the models of newly selected modules exist when their resources are resolved.
   */
  apply(config: MachineConfig): Promise<void> {
    // Never rejects: a module problem must not stop the runtime or the rest of a reconfiguration.
    // (enqueue has logged the error.)
    return this.enqueue(() => this.applyNow(config)).catch(() => undefined);
  }

  private async applyNow(config: MachineConfig): Promise<void> {
    this.logSettings = { debug: this.kernel.debug || config.debug, rules: config.log.map((r) => ({ pattern: compileLogPattern(r.pattern), level: r.level })) };
    this.entries = config.modules;
    this.warnAboutConfig(config);
    if (this.options.untrusted) {
      this.records.clear();
      for (const selection of selectModules(this.entries, [], this.folder)) this.records.set(selection.moduleId, { selection });
      return;
    }
    const { path, from } = pluginsFolder({
      env: this.options.pluginsDirEnv,
      moduleDir: config.module_dir,
      configPath: this.options.configPath,
      home: this.options.home,
    });
    if (path !== this.folder || (!this.watched && this.entries.length)) {
      this.folder = path;
      if (this.entries.length) this.log.info('plugins folder', { path, from });
    }
    await this.follow();
    await this.reconcile(false);
  }

  /** Stops following the plugins folder and reloading. Loaded models stay until the Machine shuts down. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.settleTimer);
    for (const record of this.records.values()) clearTimeout(record.failure?.timer);
    await this.watched?.watcher.close();
    this.watched = undefined;
    this.guard.uninstall();
  }

  private enqueue(operation: () => Promise<void>): Promise<void> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch((err) => this.log.error('module operation failed', { error: String(err) }));
    return run;
  }

  /** Watches the plugins folder while modules are configured; a copy or removal is followed by a rescan. */
  private async follow(): Promise<void> {
    const wanted = this.entries.length > 0 && !this.closed ? this.folder : undefined;
    if (this.watched?.path === wanted) return;
    await this.watched?.watcher.close();
    this.watched = undefined;
    if (!wanted) return;
    try {
      mkdirSync(wanted, { recursive: true });
    } catch (err) {
      this.log.warn('cannot create the plugins folder', { path: wanted, error: (err as Error).message });
    }
    const watcher = watch(wanted, { ignoreInitial: true, depth: 3, ignored: (path) => /[\\/]node_modules[\\/]/.test(path) });
    watcher.on('all', (_event, path) => {
      // A change inside the folder of a module that failed to load is worth a retry now, not after the backoff.
      for (const { selection, failure } of this.records.values()) {
        if (failure && selection.package && path.startsWith(selection.package.dir)) failure.due = true;
      }
      clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => void this.enqueue(() => this.reconcile(true)), this.options.settleMs);
    });
    watcher.on('error', (err) => this.log.warn('watching the plugins folder failed', { path: wanted, error: String(err) }));
    this.watched = { path: wanted, watcher };
  }

  /** Brings the loaded modules in line with the config and the folder. */
  private async reconcile(refreshAfter: boolean): Promise<void> {
    if (this.closed) return;
    try {
      this.found = scanPluginsFolder(this.folder);
    } catch (err) {
      // Unreadable now (permissions, a disk being remounted): every module is reported missing until it is readable.
      this.log.error('cannot scan the plugins folder', { path: this.folder, error: (err as Error).message });
      this.found = [];
    }
    const selections = new Map(selectModules(this.entries, this.found, this.folder).map((s) => [s.moduleId, s]));
    let unloaded = false;
    for (const [id, record] of this.records) {
      const selection = selections.get(id);
      if (!selection) {
        clearTimeout(record.failure?.timer);
        this.records.delete(id);
      } else {
        record.selection = selection;
      }
      const next = selection?.package;
      if (record.loaded && (!next || next.dir !== record.loaded.package.dir || next.signature !== record.loaded.package.signature)) {
        this.unload(record, !selection ? 'it is no longer in the config' : next ? 'its folder changed' : 'its folder is gone or no longer matches the config');
        unloaded = true;
      }
    }
    // Resources of an unloaded module close now, before another version of it registers the same models.
    if (unloaded) await this.machine.refresh();
    let changed = false;
    for (const [id, selection] of selections) {
      const record = this.records.get(id) ?? { selection };
      this.records.set(id, record);
      if (!selection.package) {
        // Said once per distinct problem: the module's resources carry it too, but a module may have none yet.
        if (record.reported !== selection.problem) this.log.warn(selection.problem!, { module_id: id });
        record.reported = selection.problem;
        if (record.failure) changed = true;
        clearTimeout(record.failure?.timer);
        record.failure = undefined;
        continue;
      }
      record.reported = undefined;
      const { failure } = record;
      if (record.loaded || (failure && failure.signature === selection.package.signature && !failure.due)) continue;
      await this.load(record, selection.package);
      changed = true;
    }
    if (refreshAfter && changed) await this.machine.refresh();
  }

  /** The APIs that the loaded modules define with their own .proto (module.json `apis`). */
  apis(): ModuleApi[] {
    return [...this.records.values()].flatMap((r) =>
      r.loaded
        ? (r.loaded.package.manifest.apis ?? []).map((a) => ({
            moduleId: r.loaded!.package.manifest.module_id,
            api: a.api,
            service: a.service,
            proto: resolvePath(r.loaded!.package.dir, a.proto),
            actuator: a.actuator,
          }))
        : [],
    );
  }

  /** Told the module APIs each time a module is loaded or unloaded (the gRPC server serves them). */
  onApis(listener: (apis: ModuleApi[]) => void): void {
    this.apiListener = listener;
  }

  private unload(record: ModuleRecord, why: string): void {
    const { package: pkg } = record.loaded!;
    this.registry.unregisterModule(pkg.manifest.module_id);
    record.loaded = undefined;
    if (pkg.manifest.apis?.length) this.apiListener(this.apis());
    // The module's name is in the message: deduplication must not fold lines about different modules together.
    this.log.info(`module ${pkg.manifest.module_id} ${pkg.manifest.version} unloaded`, {
      module_id: pkg.manifest.module_id,
      version: pkg.manifest.version,
      dir: pkg.dir,
      reason: why,
    });
  }

  private async load(record: ModuleRecord, pkg: ModulePackage): Promise<void> {
    const id = pkg.manifest.module_id;
    clearTimeout(record.failure?.timer);
    try {
      const runnable = await runnableModule(pkg);
      const url = pathToFileURL(runnable.entrypoint).href;
      await probeEntrypoint(url, pkg.manifest, this.options.loadTimeoutMs);
      // A new query string makes the main thread import the folder's current code, not its module cache.
      this.guard.install();
      const definition = await loadModuleDefinition(`${url}?load=${++this.generation}`, pkg.manifest);
      try {
        for (const model of definition.models) this.registry.register(guardModel(model), id);
      } catch (err) {
        this.registry.unregisterModule(id);
        throw err;
      }
      record.loaded = { package: pkg, models: definition.models.map((m) => m.model), root: runnable.root, at: Date.now() };
      record.failure = undefined;
      if (pkg.manifest.apis?.length) this.apiListener(this.apis());
      this.log.info(`module ${id} ${pkg.manifest.version} loaded`, {
        module_id: id,
        version: pkg.manifest.version,
        dir: pkg.dir,
        models: record.loaded.models,
      });
    } catch (err) {
      this.retryLater(record, pkg, 'failed to load', (err as Error).message);
    }
  }

  /** Code of a loaded module threw on the main thread after loading: unload it and reload it with backoff. */
  private async crashed(moduleId: string, error: Error): Promise<void> {
    const record = this.records.get(moduleId);
    if (!record?.loaded || this.closed) return;
    const { package: pkg, at } = record.loaded;
    record.crashes = Date.now() - at < this.options.backoffMaxMs ? (record.crashes ?? 0) + 1 : 1;
    this.unload(record, 'it crashed');
    this.retryLater(record, pkg, 'crashed', error.message, record.crashes);
    await this.machine.refresh();
  }

  private retryLater(record: ModuleRecord, pkg: ModulePackage, kind: Failure['kind'], message: string, streak?: number): void {
    const attempts = streak ?? (record.failure?.signature === pkg.signature ? record.failure.attempts : 0) + 1;
    const retryInMs = Math.min(this.options.backoffInitialMs * 2 ** (attempts - 1), this.options.backoffMaxMs);
    const failure: Failure = { kind, message, attempts, signature: pkg.signature, retryInMs, due: false };
    record.failure = failure;
    this.log.error(`module ${pkg.manifest.module_id} ${kind}`, {
      module_id: pkg.manifest.module_id,
      version: pkg.manifest.version,
      dir: pkg.dir,
      error: message,
      attempt: attempts,
      retry_in_ms: retryInMs,
    });
    failure.timer = setTimeout(() => {
      failure.due = true;
      void this.enqueue(() => this.reconcile(true));
    }, retryInMs);
    failure.timer.unref();
  }

  /** Why a model that looks modular is not registered; the resource's error. */
  /** Why a model is missing, when a module explains it (not in the config, not installed, failed). */
  explain(api: string, model: string): string | undefined {
    const moduleId = moduleIdOf(model);
    if (!moduleId) return undefined;
    if (!this.records.has(moduleId)) {
      if (this.options.untrusted) return `is provided by module ${moduleId}, and modules are disabled by -untrusted-env`;
      const onDisk = this.found.flatMap((f) => ('package' in f && f.package.manifest.module_id === moduleId ? [f.package.manifest.version] : []));
      const hint = onDisk.length ? ` (the plugins folder has version ${onDisk.join(', ')})` : '';
      return `is a model of module ${moduleId}, which is not in the config's modules: add {"module_id": "${moduleId}", "version": "<version>"}${hint}`;
    }
    const record = this.records.get(moduleId)!;
    if (record.loaded) {
      const provided = this.registry
        .list()
        .filter((m) => m.moduleId === moduleId)
        .map((m) => `${m.definition.model} (${m.definition.api})`);
      return `is not provided for ${api} by module ${moduleId} ${record.loaded.package.manifest.version}, which provides ${provided.join(', ')}`;
    }
    return this.explainModule(moduleId);
  }

  private explainModule(moduleId: string): string | undefined {
    const record = this.records.get(moduleId);
    if (!record) return undefined;
    if (this.options.untrusted) return `is provided by module ${moduleId}, and modules are disabled by -untrusted-env`;
    if (record.loaded) return undefined;
    if (record.selection.problem) return record.selection.problem;
    if (record.failure) {
      const { kind, attempts, retryInMs, message } = record.failure;
      return `module ${moduleId} ${kind} (attempt ${attempts}, next try in ${Math.round(retryInMs / 1000)} s): ${message}`;
    }
    return `module ${moduleId} is not loaded yet`;
  }

  /** Config the user may expect to matter but that does not, said once while it lasts. */
  private warnAboutConfig(config: MachineConfig): void {
    const notes = configNotes(config, this.options.untrusted);
    for (const note of notes) if (!this.warned.has(note.key)) this.log.warn(note.message, note.fields);
    this.warned = new Set(notes.map((n) => n.key));
  }
}

/** The module host's part in the kernel's extension points: why a model is missing, and modules' log levels. */
export function provideModuleHostExtensions(extensions: KernelExtensions, host: () => ModuleHost): void {
  extensions.provide(missingModelExplanation, (api, model) => host().explain(api, model));
  extensions.provide(moduleLogLevel, (moduleId) => host().moduleLogLevel(moduleId));
}
