// The data manager's driver, in its own worker: capture loops for every configured resource method (each
// calling the resource's worker directly over its dependency channel), the once-a-second fdatasync of open
// files, and the sync pass at every sync interval (which first closes the open files) with retries after
// failures. DoCommand {"status": {}} reports the backlog; {"sync": {}} closes the open files and syncs now.
import { accessSync, constants, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineApi } from '../../plugins/api.js';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { defineDriver, type DriverLogger, type Resource } from '../../plugins/driver.js';
import type { CapturedBinary } from '../../plugins/capture.js';
import type { DataManagerAttributes, CaptureMethodSpec } from '../config/data-manager-attributes.js';
import { OPEN_SUFFIX, recoverCaptureFile } from './capture-file.js';
import { CaptureLoop } from './capture-loop.js';
import { ownedByOtherLiveProcess } from './file-owner.js';
import { builtinCaptureMethods, type Captured, type CaptureCall } from '../resource/capture-methods.js';
import { deleteWhenDiskFull } from './disk-space.js';
import { connectPartCloud, type PartCloud } from './part-cloud.js';
import { InsecureCredentialsError } from '../cloud-link/address.js';
import { Syncer } from './sync.js';
import { SAMPLE, type SamplerFunction } from '../workers/port-sampler.js';
// Only node built-ins at load: the OpenTelemetry packages are imported by startTracing when it is called.
import { startTracing, type Tracing } from '../serving/telemetry/tracing.js';

export interface DataManager extends Resource {
  doCommand(command: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** Fails with a message naming capture_dir when the folder cannot be created or written. */
function checkCaptureDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new Error(`attributes.capture_dir ${JSON.stringify(dir)}: must be a folder the runtime can write (${(err as Error).message})`, { cause: err });
  }
}

/**
 * Closes the `.prog` files a crash left behind, cutting torn records; logs what it found. A file whose owner
 * (file-owner.ts) is a live runtime sharing this capture_dir is being written: it is left alone.
 */
function recoverOpenFiles(dir: string, logger: DriverLogger): void {
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(OPEN_SUFFIX)) {
        const owner = ownedByOtherLiveProcess(full.slice(0, -OPEN_SUFFIX.length));
        if (owner) {
          logger.info('left a capture file open: another runtime sharing capture_dir is writing it', { file: full, owner_pid: owner.pid });
          continue;
        }
        const result = recoverCaptureFile(full);
        logger.info('recovered a capture file left open by a stop or crash', {
          file: result.path ?? full,
          records: result.records,
          cut_bytes: result.cutBytes,
        });
      }
    }
  };
  walk(dir);
}

/** The calls and the shaping of one capture method: the model's declared method, or the api's built-in one. */
function captureMethod(api: string, spec: CaptureMethodSpec): { calls: CaptureCall[]; shape: (values: unknown[]) => Captured } {
  const params = spec.additionalParams as Record<string, unknown>;
  if (spec.driverMethod) {
    return {
      calls: [{ method: spec.driverMethod, args: [params] }],
      shape: ([result]) =>
        spec.kind === 'tabular' ? { kind: 'tabular', data: result as Record<string, unknown> } : { kind: 'binary', binary: result as CapturedBinary },
    };
  }
  const builtin = builtinCaptureMethods[api][spec.method];
  return { calls: builtin.calls(params), shape: (values) => builtin.shape(values, params) };
}

/** The sampler of a dependency (core/workers/port-sampler.ts), which every dependency's proxy carries. */
function samplerOf(proxy: unknown, name: string): SamplerFunction {
  const sample = (proxy as Record<symbol, SamplerFunction | undefined>)[SAMPLE];
  if (!sample) throw new Error(`capture of ${name}: its channel cannot sample (not a worker dependency)`);
  return sample;
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 1000) / 1000;
}

export default defineDriver<DataManagerAttributes, DataManager>(({ attributes, dependencies, logger }) => {
  const captureDir = attributes.capture_dir;
  checkCaptureDir(captureDir);
  recoverOpenFiles(captureDir, logger);
  // This worker's own tracing of its sync uploads, only when the config's tracing is on: OpenTelemetry is
  // loaded into this worker then and never otherwise. Uploads before it is ready go untraced.
  const tracing = attributes._tracing ? startWorkerTracing(attributes._tracing, logger) : undefined;
  let cloud: PartCloud | undefined;
  let noCloud: string | undefined;
  try {
    cloud = attributes._cloud ? connectPartCloud(attributes._cloud) : undefined;
  } catch (err) {
    // Plaintext to a remote host without -allow-insecure-creds: capture goes on, the files stay in
    // capture_dir, and the refusal is logged and shown as the sync status' last_error.
    if (!(err instanceof InsecureCredentialsError)) throw err;
    noCloud = `sync is off: ${err.message}`;
    logger.error(noCloud, { app_address: attributes._cloud?.appAddress });
  }
  const syncer = new Syncer({
    noCloud,
    captureDir,
    additionalSyncPaths: attributes.additional_sync_paths,
    tags: attributes.tags,
    threads: attributes.maximum_num_sync_threads,
    cloud,
    log: logger,
  });
  const loops = attributes._targets.flatMap((target) =>
    target.methods.map(
      (spec) =>
        new CaptureLoop({
          captureDir,
          resource: target.resource,
          api: target.api,
          spec,
          maxFileBytes: attributes.maximum_capture_file_size_bytes,
          ...captureMethod(target.api, spec),
          sample: samplerOf(dependencies.get(defineApi<unknown>(target.api), target.resource), target.resource),
          onError: (message) => logger.warn(message),
        }),
    ),
  );
  if (!cloud && !noCloud && !attributes.sync_disabled)
    logger.warn('sync is on but the config has no cloud section (id, secret, app_address): captured files stay in capture_dir');

  /** The selective syncer's `should_sync` reading gates each pass; a failing read skips it. */
  const syncAllowed = async (): Promise<boolean> => {
    const name = attributes.selective_syncer_name;
    if (!name) return true;
    try {
      const readings = await dependencies.get(SENSOR_API, name).getReadings();
      return readings.should_sync === true;
    } catch (err) {
      syncer.status.last_error = `selective syncer ${name}: ${(err as Error).message}`;
      return false;
    }
  };

  const checkDisk = () => {
    try {
      const report = deleteWhenDiskFull(captureDir, {
        deleteEveryNth: attributes.delete_every_nth_when_disk_full,
        diskUsage: attributes.disk_usage_deletion_threshold,
        captureDirShare: attributes.capture_dir_deletion_threshold,
      });
      if (report)
        logger.warn('disk nearly full: deleted every nth capture file', {
          deleted: report.deleted,
          kept: report.kept,
          freed_bytes: report.freedBytes,
          disk_used_fraction: report.diskUsedFraction,
          capture_dir_fraction: report.captureDirFraction,
          every_nth: attributes.delete_every_nth_when_disk_full,
        });
    } catch (err) {
      logger.warn('disk usage check failed', { error: (err as Error).message });
    }
  };

  let stopped = false;
  const syncNow = async (): Promise<void> => {
    if (attributes.sync_disabled || stopped) return;
    if (await syncAllowed()) await syncer.syncOnce();
  };
  /** maximum_capture_dir_bytes: the oldest closed files go first, counted in the status. */
  const bound = () => {
    const max = attributes.maximum_capture_dir_bytes;
    if (max === undefined) return;
    const dropped = syncer.enforceBound(max);
    if (dropped)
      logger.warn('capture backlog over maximum_capture_dir_bytes: dropped the oldest capture files', {
        files: dropped.files,
        records: dropped.records,
        bytes: dropped.bytes,
        maximum_capture_dir_bytes: max,
      });
  };
  const interval = () => {
    for (const loop of loops) loop.rotate();
    checkDisk();
    bound();
    void syncNow();
  };
  const housekeeping = () => {
    for (const loop of loops) {
      try {
        loop.syncOpenFile();
      } catch (err) {
        logger.warn('fdatasync of a capture file failed', { capture: loop.key, error: (err as Error).message });
      }
    }
    bound();
    // Retry a failed pass once its backoff has passed, without waiting for the next interval.
    if (syncer.nextRetryAt && Date.now() >= syncer.nextRetryAt) void syncNow();
  };
  const intervalTimer = setInterval(interval, attributes.sync_interval_mins * 60_000);
  const housekeepingTimer = setInterval(housekeeping, 1000);
  for (const loop of loops) loop.run();
  // Files left from an earlier run (or recovered above) need not wait a whole interval.
  setImmediate(() => {
    checkDisk();
    void syncNow();
  });

  const status = () => {
    syncer.pending();
    const capture: Record<string, unknown> = {};
    for (const loop of loops) {
      const s = loop.stats;
      const recent = loop.recentLateness();
      capture[loop.key] = {
        records: s.records,
        skipped: s.skipped,
        errors: s.errors,
        last_error: s.last_error,
        lateness_p50_ms: percentile(recent, 0.5),
        lateness_p99_ms: percentile(recent, 0.99),
        open_file_bytes: loop.openBytes,
      };
    }
    return {
      ...syncer.status,
      capture,
      capture_disabled: attributes.capture_disabled,
      sync_disabled: attributes.sync_disabled,
      cloud: attributes._cloud?.appAddress ?? null,
    };
  };

  return {
    async doCommand(command) {
      if ('status' in command) return { status: status() };
      if ('sync' in command) {
        for (const loop of loops) loop.rotate();
        await syncNow();
        return { status: status() };
      }
      throw new Error(`unknown command; the data manager understands {"status": {}} and {"sync": {}}, got keys ${Object.keys(command).join(', ') || '(none)'}`);
    },
    async close() {
      stopped = true;
      clearInterval(intervalTimer);
      clearInterval(housekeepingTimer);
      await Promise.all(loops.map((loop) => loop.stop()));
      // An upload in progress may finish (bounded): its file is deleted only if the cloud answered.
      await Promise.race([syncer.settled(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      cloud?.close();
      await (await tracing)?.shutdown();
    },
  };
});

async function startWorkerTracing(settings: NonNullable<DataManagerAttributes['_tracing']>, logger: DriverLogger): Promise<Tracing | undefined> {
  try {
    return await startTracing({
      serviceName: 'platform-server',
      otlpEndpoint: settings.otlp_endpoint,
      console: settings.console ? process.stderr : undefined,
      diskDir: settings.disk_dir,
      sampleRatio: settings.sample_ratio,
      // Parents are passed by hand here (capture-tracing.ts, part-cloud.ts): no async hook on every promise.
      asyncContext: false,
    });
  } catch (err) {
    logger.error('tracing of the sync uploads could not start; they go untraced', { error: (err as Error).message });
    return undefined;
  }
}
