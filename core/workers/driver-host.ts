// The body of a resource's Piscina worker. It holds exactly one driver instance as module state,
// constructs it from its model's driver module, serves calls from the kernel (Piscina tasks) and from
// dependents (MessagePorts), and forwards the driver's log lines to the main thread.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort } from 'node:worker_threads';
import type { DriverContext, DriverFactory, DriverLogger, Resource } from '../../plugins/contract.js';
import { invoke, type Invocation } from './invoke.js';
import { driverDependencies } from './driver-dependencies.js';
import { portChannel, servePort } from './port-rpc.js';
import { createRemote } from './remote.js';
import { LEVEL_VALUES, type ConstructTask, type DriverTask, type LogLevelName, type LogRecord, type LogSyncRecord, type Outcome } from './protocol.js';

let driver: Resource | undefined;
/** The name of the resource this worker hosts, for DriverError.resource. */
let resourceName: string | undefined;
let minLevel = LEVEL_VALUES.info;

/**
 * Where a driver module is loaded from. A built-in driver built to dist/ has a single-file CommonJS
 * bundle beside it (driver.bundle.cjs, see scripts/build.mjs): loading only CommonJS spares the worker
 * the ES module loader, about 8 ms of CPU per worker. Under tsx the sources are .ts files while plugin
 * code names its driver `./driver.js`.
 */
function resolveDriverUrl(href: string): string {
  if (!href.startsWith('file:') || !href.endsWith('.js')) return href;
  const path = fileURLToPath(href);
  const bundle = `${path.slice(0, -3)}.bundle.cjs`;
  if (existsSync(bundle)) return pathToFileURL(bundle).href;
  if (existsSync(path)) return href;
  const ts = path.slice(0, -3) + '.ts';
  return existsSync(ts) ? pathToFileURL(ts).href : href;
}

/**
 * Loads a driver module. Bundles and TypeScript sources (tests under tsx) go through require: on Node 20
 * tsx hooks `require` in worker threads but not `import()`. Other JavaScript is imported.
 */
async function loadDriverModule(href: string): Promise<{ default?: DriverFactory }> {
  const resolved = resolveDriverUrl(href);
  if (resolved.endsWith('.ts') || resolved.endsWith('.cjs')) return createRequire(fileURLToPath(resolved))(fileURLToPath(resolved));
  return import(resolved);
}

function createLogger(logger: string, fields: Record<string, unknown> | undefined): DriverLogger {
  const emit = (level: LogLevelName) => (message: string, extra?: Record<string, unknown>) => {
    if (LEVEL_VALUES[level] < minLevel) return;
    const record: LogRecord = { type: 'log', level, logger, message, fields: { ...fields, ...extra }, time: Date.now() };
    parentPort?.postMessage(record);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

async function construct(task: ConstructTask): Promise<Outcome> {
  minLevel = LEVEL_VALUES[task.logLevel];
  resourceName = task.name;
  const dependencies = task.dependencies.map((d) => {
    const channel = portChannel(d.port, d.name);
    return { name: d.name, api: d.api, remote: createRemote<unknown>(channel.send, channel.sample) };
  });
  const context: DriverContext<unknown> = {
    name: task.name,
    api: task.api,
    model: task.model,
    attributes: task.attributes,
    logger: createLogger(task.logger, task.logFields),
    dependencies: driverDependencies(task.name, dependencies),
  };
  const module = await loadDriverModule(task.driverUrl);
  if (typeof module.default !== 'function') {
    throw new Error(`driver module ${task.driverUrl} has no default export DriverFactory`);
  }
  driver = await module.default(context);
  servePort(task.kernelPort, () => driver);
  parentPort?.postMessage({ type: 'log-sync' } satisfies LogSyncRecord);
  return { ok: true, value: null };
}

/**
 * Piscina moves the buffers of a result instead of cloning them when the result is marked movable.
 * Piscina's main module is imported on the first such result only: most drivers never transfer, and
 * loading it would add tens of milliseconds to every worker's start.
 */
async function reply({ outcome, transfer }: Invocation): Promise<unknown> {
  if (transfer.length === 0) return outcome;
  const { move, transferableSymbol, valueSymbol } = await import('piscina');
  return move({ [transferableSymbol]: transfer, [valueSymbol]: outcome } as never);
}

export default async function run(task: DriverTask): Promise<unknown> {
  switch (task.op) {
    case 'call':
      return reply(await invoke(driver, task.method, task.args, resourceName));
    case 'construct':
      try {
        return await construct(task);
      } catch (err) {
        // A constructor that throws is reported as a value; the kernel marks the resource unhealthy.
        const { outcome } = await invoke({ fail: () => Promise.reject(err) }, 'fail', [], task.name);
        return outcome;
      }
    case 'serve':
      servePort(task.port, () => driver, resourceName);
      return { ok: true, value: null };
    case 'logLevel':
      minLevel = LEVEL_VALUES[task.level];
      return { ok: true, value: null };
    case 'close': {
      const closing = driver;
      driver = undefined;
      if (!closing?.close) return { ok: true, value: null };
      return (await invoke(closing, 'close', [], resourceName)).outcome;
    }
  }
}
