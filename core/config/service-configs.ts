// The `service_configs` of a resource entry: per-resource settings that a service reads, such as which of
// the resource's methods the data manager captures. Validated with the entry, so a mistake names its path.
import * as z from 'zod';
import { CAPTURE_METHOD_NAME } from '../../plugins/capture.js';

export const captureMethodSchema = z.strictObject({
  method: z.string({ error: 'is required and must be a string' }).regex(CAPTURE_METHOD_NAME, 'must be a capture method name such as Readings or GetImage'),
  capture_frequency_hz: z
    .number({ error: 'is required and must be a number' })
    .gt(0, 'must be greater than 0 (set disabled to stop capturing)')
    .max(1000, 'must be at most 1000'),
  additional_params: z.record(z.string(), z.json(), { error: 'must be an object' }).default({}),
  disabled: z.boolean({ error: 'must be true or false' }).default(false),
  tags: z.array(z.string({ error: 'must be a string' }).min(1, 'must not be empty'), { error: 'must be an array of strings' }).default([]),
});

export type CaptureMethodConfig = z.output<typeof captureMethodSchema>;

const dataManagerServiceConfig = z.strictObject({
  capture_methods: z
    .array(captureMethodSchema, { error: 'must be an array of capture methods' })
    .default([])
    .superRefine((methods, ctx) => {
      const first = new Map<string, number>();
      methods.forEach((m, i) => {
        const at = first.get(m.method);
        if (at === undefined) first.set(m.method, i);
        else ctx.addIssue({ code: 'custom', path: [i, 'method'], message: `duplicate capture method, already listed at capture_methods[${at}]` });
      });
    }),
});

export const DATA_MANAGER_SERVICE_TYPE = 'data_manager';

const serviceConfig = z
  .strictObject({
    type: z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty'),
    attributes: z.record(z.string(), z.unknown(), { error: 'must be an object' }).default({}),
  })
  .superRefine((config, ctx) => {
    if (config.type !== DATA_MANAGER_SERVICE_TYPE) return;
    const parsed = dataManagerServiceConfig.safeParse(config.attributes);
    if (parsed.success) config.attributes = parsed.data;
    else for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['attributes', ...issue.path] } as never);
  });

export const serviceConfigsSchema = z
  .array(serviceConfig, { error: 'must be an array of {type, attributes}' })
  .default([])
  .superRefine((configs, ctx) => {
    const first = new Map<string, number>();
    configs.forEach((c, i) => {
      const at = first.get(c.type);
      if (at === undefined) first.set(c.type, i);
      else ctx.addIssue({ code: 'custom', path: [i, 'type'], message: `duplicate service type, already configured at service_configs[${at}]` });
    });
  });

export type ServiceConfig = z.output<typeof serviceConfig>;

/** The capture methods a resource entry configures for the data manager (validated by serviceConfigsSchema). */
export function captureMethodsOf(serviceConfigs: readonly ServiceConfig[]): CaptureMethodConfig[] {
  const config = serviceConfigs.find((c) => c.type === DATA_MANAGER_SERVICE_TYPE);
  return (config?.attributes.capture_methods as CaptureMethodConfig[] | undefined) ?? [];
}
