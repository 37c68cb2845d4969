// The machine: every configured resource, built in its own worker in dependency order, rebuilt with
// backoff when it fails, reconfigured in place when the config changes, and closed in reverse order.
// All changes to the set of resources go through one queue, so a reconfiguration, a rebuild after a
// crash and a shutdown never interleave.
import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import type { Context } from '@opentelemetry/api';
import { inject, injectable } from 'tsyringe';
import type { Remote } from '../../plugins/contract.js';
import { DriverError } from '../../plugins/errors.js';
import type { Api } from '../../plugins/api.js';
import { parseApi, resourceLoggerName } from '../../plugins/names.js';
import { echo } from '../serving/bounded-text.js';
import type { MachineConfig } from '../config/machine-config.js';
import { parseResourceEntries } from '../config/resource-entry.js';
import { entryCompletion, entrySubstitution, KERNEL_EXTENSIONS, KernelExtensions, missingModelExplanation, moduleLogLevel } from './extension-points.js';
import { compileLogPattern, levelFor, type LevelName, type LogSettings } from '../config/log-rules.js';
import { LOG_SINK, type LogSink } from '../logging/sink.js';
import { analyzeGraph, dependentsOf, type GraphNode } from '../resource/resource-graph.js';
import { ModelRegistry } from '../resource/model-registry.js';
import type { ConfigError } from '../../plugins/validation.js';
import { resolveResources } from '../resource/resolve-resources.js';
import { DRIVER_HOSTING, type DriverHandle, type DriverHosting, type DriverLogLine } from '../workers/driver-hosting.js';
import { createRemote } from '../workers/remote.js';
import { timeDriverCall } from './machine-metrics.js';
import { inSpan } from '../serving/telemetry/tracing.js';
import { forEachLimited } from './limit.js';
import { KernelOptions } from './options.js';
import { ResourceNode, type ResourceState, type ResourceStatus } from './resource-node.js';

export interface ResourceStatistics {
  key: string;
  state: ResourceState;
  /** How many times the resource has been constructed. */
  revision: number;
  workerAlive: boolean;
  /** Calls to the current worker through the kernel (the API layer); a rebuild starts again from 0. */
  calls: number;
}

export type MachineState = 'initializing' | 'running' | 'stopping' | 'stopped';

export interface MachineEvents {
  /** A resource changed state. Tests record start and stop order from these. */
  state: [status: ResourceStatus];
  /** A resource's driver was closed (its worker ended). */
  closed: [key: string];
}

@injectable()
export class Machine extends EventEmitter<MachineEvents> {
  private readonly nodes = new Map<string, ResourceNode>();
  private queue: Promise<unknown> = Promise.resolve();
  private settings: LogSettings = { debug: false, rules: [] };
  private current?: MachineConfig;
  /** The config error last logged per resource key, so that a refresh does not log it again. */
  private readonly loggedConfigErrors = new Map<string, string>();
  state: MachineState = 'initializing';
  readonly log;

  constructor(
    @inject(ModelRegistry) private readonly registry: ModelRegistry,
    @inject(LOG_SINK) private readonly sink: LogSink,
    @inject(KernelOptions) private readonly options: KernelOptions,
    /** What others extend (core/kernel/extension-points.ts), composed in core/server/compose.ts. */
    @inject(KERNEL_EXTENSIONS) private readonly extensions: KernelExtensions,
    /** Where drivers run: worker threads (platform-server) or the main thread (platform-micro-server). */
    @inject(DRIVER_HOSTING) private readonly hosting: DriverHosting,
  ) {
    super();
    this.settings = { debug: options.debug, rules: [] };
    this.log = sink.logger('platform.kernel', () => levelFor('platform.kernel', this.settings));
  }

  get config(): MachineConfig | undefined {
    return this.current;
  }

  /** Applies a config: the first call starts the machine, later calls reconfigure it. */
  apply(config: MachineConfig): Promise<void> {
    return this.enqueue(() => {
      // A new revision: each of its config errors is logged once, even one the last revision had too.
      this.loggedConfigErrors.clear();
      // A span when tracing is on (core/serving/telemetry/tracing.ts).
      return inSpan('reconfigure', {}, () => this.applyNow(config));
    });
  }

  /** Re-resolves the current config, e.g. after modules changed which models exist. */
  refresh(): Promise<void> {
    return this.enqueue(async () => {
      if (this.current && this.state === 'running') await this.applyNow(this.current);
    });
  }

  /** Closes every resource, dependents first. */
  shutdown(): Promise<void> {
    return this.enqueue(async () => {
      if (this.state === 'stopped') return;
      this.state = 'stopping';
      for (const node of this.nodes.values()) {
        clearTimeout(node.retry);
        clearTimeout(node.settle);
      }
      await this.closeInOrder(new Set(this.nodes.keys()));
      this.state = 'stopped';
    });
  }

  /** The config errors of the running config's resource entries, with their paths and rules. */
  configErrors(): ConfigError[] {
    return [...this.nodes.values()].flatMap((n) => (n.spec.configError ? [n.spec.configError] : []));
  }

  statuses(): ResourceStatus[] {
    return [...this.nodes.values()].map((n) => n.status()).sort((a, b) => a.key.localeCompare(b.key));
  }

  /** What full-time data capture records of each resource; cheap enough to call every second. */
  statistics(): ResourceStatistics[] {
    return [...this.nodes.values()].map((n) => ({
      key: n.key,
      state: n.state,
      revision: n.revision,
      workerAlive: n.worker?.alive ?? false,
      calls: n.worker?.calls ?? 0,
    }));
  }

  status(name: string): ResourceStatus | undefined {
    return this.nodes.get(name)?.status();
  }

  /**
   * The worker of a ready resource, for the API layer. Errors name why the resource cannot be used:
   * NOT_FOUND when no such resource of that api exists, UNAVAILABLE when it exists but is not ready.
   */
  resource<T>(name: string, api: Api<T>, trace?: Context): Remote<T> {
    const node = this.nodes.get(name);
    if (!node) throw new DriverError('NOT_FOUND', `no resource named ${JSON.stringify(echo(name))}`, name);
    if (node.spec.entry.api !== api) {
      throw new DriverError('NOT_FOUND', `resource ${JSON.stringify(echo(name))} is a ${node.spec.entry.api}, not a ${api}`, name);
    }
    if (node.state !== 'ready' || !node.worker) {
      throw new DriverError('UNAVAILABLE', `resource ${JSON.stringify(name)} is not ready (${node.state}${node.error ? `: ${node.error}` : ''})`, name);
    }
    const worker = node.worker;
    return createRemote<T>((method, args) => timeDriverCall(name, method, () => worker.call(method, args), trace));
  }

  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch((err) => this.log.error('kernel operation failed', { error: String(err) }));
    return run;
  }

  private setState(node: ResourceNode, state: ResourceState, error?: string): void {
    node.state = state;
    node.error = error;
    node.lastUpdated = new Date();
    this.emit('state', node.status());
  }

  private graph(): GraphNode[] {
    return [...this.nodes.values()].filter((n) => n.key === n.spec.entry.name).map((n) => ({ name: n.key, dependencies: n.spec.dependencies }));
  }

  private levelOf(node: ResourceNode): LevelName {
    const { entry, model } = node.spec;
    const own = model?.moduleId ? this.extensions.firstAnswer(moduleLogLevel, model.moduleId) : entry.logLevel;
    return levelFor(this.loggerName(node), this.settings, own);
  }

  private loggerName(node: ResourceNode): string {
    try {
      return resourceLoggerName(parseApi(node.spec.entry.api), node.spec.entry.name);
    } catch {
      return `platform.resources.${node.spec.entry.name}`;
    }
  }

  private async applyNow(config: MachineConfig): Promise<void> {
    this.current = config;
    this.settings = { debug: this.options.debug || config.debug, rules: config.log.map((r) => ({ pattern: compileLogPattern(r.pattern), level: r.level })) };
    this.sink.setDeduplicate(!config.disable_log_deduplication);
    const entries = parseResourceEntries(config.components, config.services);
    const context = { config, registry: this.registry };
    for (const step of this.extensions.all(entrySubstitution)) step(entries, context);
    for (const step of this.extensions.all(entryCompletion)) step(entries, context);
    const desired = resolveResources(entries, this.registry, (api, model) => this.extensions.firstAnswer(missingModelExplanation, api, model));
    this.logConfigErrors(desired);
    const byKey = new Map(desired.map((r) => [r.key, r]));
    const removed = [...this.nodes.keys()].filter((key) => !byKey.has(key));
    const changed = desired.filter((r) => this.nodes.get(r.key) && this.nodes.get(r.key)!.spec.fingerprint !== r.fingerprint).map((r) => r.key);
    const added = desired.filter((r) => !this.nodes.has(r.key)).map((r) => r.key);
    const newGraph = desired.map((r) => ({ name: r.key, dependencies: r.dependencies }));
    // A rebuilt or removed resource takes its dependents down with it: their channels point at the old worker.
    const affected = new Set([...dependentsOf([...removed, ...changed], this.graph()), ...dependentsOf([...changed, ...added], newGraph)]);
    const toClose = new Set([...removed, ...changed, ...[...affected].filter((k) => this.nodes.has(k))]);
    if (this.state === 'running' && (removed.length || changed.length || added.length)) {
      this.log.info('reconfiguring', { added, changed, removed, rebuilt_dependents: [...affected] });
    }
    await this.closeInOrder(toClose);
    for (const key of removed) {
      clearTimeout(this.nodes.get(key)?.retry);
      clearTimeout(this.nodes.get(key)?.settle);
      this.nodes.delete(key);
    }
    for (const resource of desired) {
      const node = this.nodes.get(resource.key);
      if (node) node.spec = resource;
      else this.nodes.set(resource.key, new ResourceNode(resource));
    }
    // Resources still waiting on a dependency get another chance now that the set may have changed.
    const waiting = [...this.nodes.values()].filter((n) => n.state !== 'ready' && !n.retry).map((n) => n.key);
    await this.buildInOrder(new Set([...added, ...changed, ...affected, ...waiting]));
    await this.applyLogLevels();
    this.state = 'running';
  }

  /**
   * Logs each resource's config error (it already names the path and the rule) once per revision. The
   * error is part of the message, so that the log's deduplication, which keys on the message, does not
   * fold thirteen different errors into one.
   */
  private logConfigErrors(desired: readonly { key: string; error?: string }[]): void {
    for (const { key, error } of desired) {
      if (!error) {
        this.loggedConfigErrors.delete(key);
        continue;
      }
      if (this.loggedConfigErrors.get(key) === error) continue;
      this.loggedConfigErrors.set(key, error);
      this.log.error(`invalid config for resource ${key}: ${error}`, { resource: key, error });
    }
  }

  private async applyLogLevels(): Promise<void> {
    await Promise.all(
      [...this.nodes.values()].map(async (node) => {
        const level = this.levelOf(node);
        if (level === node.logLevel) return;
        node.logLevel = level;
        await node.worker?.setLogLevel(level).catch(() => undefined);
      }),
    );
  }

  /** Builds `keys` level by level; a resource whose dependencies are not ready waits, unhealthy. */
  private async buildInOrder(keys: Set<string>): Promise<void> {
    if (keys.size === 0) return;
    // Config errors first, so that a dependent waiting on such a resource names the real reason.
    const broken = [...keys].filter((k) => this.nodes.get(k)?.spec.error);
    for (const key of broken) await this.build(this.nodes.get(key)!);
    const { levels } = analyzeGraph(this.graph());
    for (const level of levels) {
      const batch = level.filter((k) => keys.has(k) && !broken.includes(k));
      await forEachLimited(batch, this.options.maxConcurrentStarts, (key) => this.build(this.nodes.get(key)!));
    }
  }

  private async closeInOrder(keys: Set<string>): Promise<void> {
    const { levels } = analyzeGraph(this.graph());
    const ordered = [...levels].reverse().map((level) => level.filter((k) => keys.has(k)));
    const placed = new Set(levels.flat());
    ordered.push([...keys].filter((k) => !placed.has(k)));
    for (const batch of ordered) {
      await forEachLimited(batch, this.options.maxConcurrentStarts, (key) => this.close(this.nodes.get(key)));
    }
  }

  private async close(node: ResourceNode | undefined): Promise<void> {
    if (!node) return;
    clearTimeout(node.retry);
    node.retry = undefined;
    const worker = node.worker;
    if (!worker) return;
    this.setState(node, 'removing');
    node.worker = undefined;
    try {
      await worker.close(this.options.closeTimeoutMs);
    } catch (err) {
      this.log.warn('resource did not close cleanly', { resource: node.key, error: (err as Error).message });
    }
    this.setState(node, 'unconfigured');
    this.emit('closed', node.key);
  }

  private async build(node: ResourceNode): Promise<void> {
    clearTimeout(node.retry);
    node.retry = undefined;
    if (this.state === 'stopping' || this.state === 'stopped') return;
    const { spec } = node;
    if (spec.error || !spec.model) {
      this.setState(node, 'unhealthy', spec.error ?? 'no model');
      // Logged as well as shown in the status: an online machine ships this line to the cloud, where a
      // config that this machine cannot run (a module not installed here) becomes visible.
      this.log.error('resource cannot be built from its config', { resource: node.key, error: node.error });
      return;
    }
    const unready = spec.dependencies.map((d) => this.nodes.get(d)!).filter((d) => d.state !== 'ready' || !d.worker);
    if (unready.length) {
      const reasons = unready.map((d) => `${d.key} (${d.state}${d.error ? `: ${d.error}` : ''})`);
      this.setState(node, 'unhealthy', `waiting for dependencies: ${reasons.join('; ')}`);
      return;
    }
    this.setState(node, 'configuring');
    const level = this.levelOf(node);
    const worker: DriverHandle = this.hosting.create(`${spec.entry.api}/${spec.entry.name}`, {
      onCrash: (error) => this.onCrash(node, worker, error),
      onLog: (record) => this.onWorkerLog(record),
    });
    try {
      const links = await Promise.all(spec.dependencies.map((d) => this.nodes.get(d)!.worker!.openChannel()));
      await worker.construct(
        {
          driverUrl: spec.model.definition.driver.href,
          name: spec.entry.name,
          api: spec.entry.api,
          model: spec.entry.model,
          attributes: spec.attributes,
          dependencies: spec.dependencies.map((name, i) => ({ name, api: this.nodes.get(name)!.spec.entry.api, link: links[i] })),
          logger: this.loggerName(node),
          logLevel: level,
          logFields: spec.model.moduleId ? { module_id: spec.model.moduleId } : undefined,
        },
        this.options.configureTimeoutMs,
      );
    } catch (err) {
      await worker.close(this.options.closeTimeoutMs).catch(() => undefined);
      this.fail(node, `construction failed: ${(err as Error).message}`);
      return;
    }
    if (!worker.alive) {
      // It crashed between answering the construction and being handed over (onCrash ignored it then,
      // as the worker was not yet the node's): a failure like any other crash.
      const error = worker.crashError ?? new Error(`the worker of ${spec.entry.api}/${spec.entry.name} exited`);
      await worker.close(this.options.closeTimeoutMs).catch(() => undefined);
      this.fail(node, `crashed: ${error.stack ?? error.message}`, error.stack);
      return;
    }
    node.worker = worker;
    node.logLevel = level;
    node.revision++;
    this.setState(node, 'ready');
    // The backoff starts over only once the resource has proven stable, not at every successful rebuild.
    clearTimeout(node.settle);
    if (node.failures > 0) {
      node.settle = setTimeout(() => {
        if (node.worker === worker && node.state === 'ready') node.failures = 0;
      }, this.options.backoffResetMs);
      node.settle.unref();
    }
  }

  private fail(node: ResourceNode, error: string, stack?: string): void {
    clearTimeout(node.settle);
    node.failures++;
    this.setState(node, 'unhealthy', error);
    this.log.error('resource failed', { resource: node.key, error, failures: node.failures, ...(stack ? { stack } : {}) });
    if (this.state === 'stopping' || this.state === 'stopped') return;
    const delay = Math.min(this.options.backoffInitialMs * 2 ** (node.failures - 1), this.options.backoffMaxMs);
    node.retry = setTimeout(() => {
      node.retry = undefined;
      void this.enqueue(() => this.rebuildNow(node.key));
    }, delay);
    node.retry.unref();
  }

  private onCrash(node: ResourceNode, worker: DriverHandle, error: Error): void {
    if (node.worker !== worker) return;
    node.worker = undefined;
    // The driver's exception, message and stack, is what tells a developer where it broke.
    this.fail(node, `crashed: ${error.stack ?? error.message}`, error.stack);
  }

  /** Rebuilds a resource and its dependents, whose channels pointed at its old worker. */
  private async rebuildNow(key: string): Promise<void> {
    if (!this.nodes.has(key) || this.state === 'stopping' || this.state === 'stopped') return;
    const keys = new Set([key, ...dependentsOf([key], this.graph())]);
    await this.closeInOrder(keys);
    await this.buildInOrder(keys);
  }

  private onWorkerLog(record: DriverLogLine): void {
    this.sink.write({ level: record.level, logger: record.logger, message: record.message, fields: record.fields });
  }
}
