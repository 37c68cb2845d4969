// The data manager's attributes (its entry in `services`), with their defaults and ranges, and the
// internal attributes the runtime adds from the rest of the config (what to capture, the cloud to sync
// to). The internal ones start with `_`: a user config that sets them is rejected (see assemble.ts).
import * as z from 'zod';
import { cloudLinkSettings } from '../cloud-link/link-settings.js';

export const DATA_MANAGER_API = 'core:service:data_manager';
export const DATA_MANAGER_MODEL = 'builtin';
export const DEFAULT_CAPTURE_DIR = '~/.platform/capture';

const fraction = (name: string) => z.number({ error: 'must be a number' }).min(0, `${name} must be at least 0`).max(1, `${name} must be at most 1`);

export const dataManagerUserAttributes = z.strictObject({
  capture_dir: z.string({ error: 'must be a string' }).min(1, 'must not be empty').default(DEFAULT_CAPTURE_DIR),
  sync_interval_mins: z.number({ error: 'must be a number' }).gt(0, 'must be greater than 0').max(1440, 'must be at most 1440 (a day)').default(0.1),
  capture_disabled: z.boolean({ error: 'must be true or false' }).default(false),
  sync_disabled: z.boolean({ error: 'must be true or false' }).default(false),
  tags: z.array(z.string({ error: 'must be a string' }).min(1, 'must not be empty'), { error: 'must be an array of strings' }).default([]),
  additional_sync_paths: z.array(z.string({ error: 'must be a string' }).min(1, 'must not be empty'), { error: 'must be an array of folders' }).default([]),
  selective_syncer_name: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
  maximum_capture_file_size_bytes: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1024, 'must be at least 1024')
    .max(1024 ** 3, 'must be at most 1 GiB')
    .default(256 * 1024),
  maximum_num_sync_threads: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(64, 'must be at most 64')
    .default(4),
  delete_every_nth_when_disk_full: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(2, 'must be at least 2')
    .max(1000, 'must be at most 1000')
    .default(5),
  /**
   * A bound on the closed capture files waiting for sync: above it the oldest are dropped (and counted),
   * so that a long outage keeps the newest data in a fixed space. None by default (platform-micro-server
   * sets 64 MiB when the config sets none).
   */
  maximum_capture_dir_bytes: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1024, 'must be at least 1024')
    .max(1024 ** 4, 'must be at most 1 TiB')
    .optional(),
  disk_usage_deletion_threshold: fraction('disk_usage_deletion_threshold').default(0.9),
  capture_dir_deletion_threshold: fraction('capture_dir_deletion_threshold').default(0.5),
});

export type DataManagerUserAttributes = z.output<typeof dataManagerUserAttributes>;

const captureMethod = z.object({
  method: z.string(),
  kind: z.enum(['tabular', 'binary']),
  /** Set for a method the model declared (plugins/capture.ts); built-ins are looked up by api. */
  driverMethod: z.string().optional(),
  frequencyHz: z.number(),
  additionalParams: z.record(z.string(), z.json()),
  tags: z.array(z.string()),
});

/** One resource the data manager captures from, with its enabled methods. */
const captureTarget = z.object({ resource: z.string(), api: z.string(), methods: z.array(captureMethod) });

export const dataManagerAttributes = dataManagerUserAttributes.extend({
  _targets: z.array(captureTarget).default([]),
  /** How the machine reaches its cloud: the link settings, built again into a CloudLink in the worker. */
  _cloud: cloudLinkSettings.optional(),
  /** Tracing of the sync uploads in the worker, when the config's `tracing` is enabled (core/server/machine-tracing.ts). */
  _tracing: z
    .object({ otlp_endpoint: z.string().optional(), console: z.boolean(), disk_dir: z.string().optional(), sample_ratio: z.number().min(0).max(1).optional() })
    .optional(),
});

export type DataManagerAttributes = z.output<typeof dataManagerAttributes>;
export type CaptureTargetConfig = z.output<typeof captureTarget>;
export type CaptureMethodSpec = z.output<typeof captureMethod>;
