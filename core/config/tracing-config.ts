// The `tracing` section of the machine config: OpenTelemetry spans of the runtime (core/serving/telemetry/).
// Read when platform-server starts; a change takes effect at the next start. `enabled` false (the
// default) loads no OpenTelemetry module at all.
import * as z from 'zod';

const endpoint = z.string({ error: 'must be a URL such as "http://collector:4318"' }).refine(
  (text) => {
    try {
      return ['http:', 'https:'].includes(new URL(text).protocol);
    } catch {
      return false;
    }
  },
  { error: 'must be an http:// or https:// URL of an OTLP/HTTP receiver, such as "http://collector:4318"' },
);

const flag = z.boolean({ error: 'must be true or false' });

export const tracingConfigSchema = z.strictObject({
  enabled: flag.default(false),
  /** Each span as a JSON line on stderr (also with -output-telemetry). */
  console: flag.default(false),
  /** Each span as a JSON line in $PLATFORM_TRACE_DIR or ~/.platform/traces. */
  disk: flag.default(false),
  /** Base URL of an OTLP/HTTP receiver; `/v1/traces` is added. */
  otlp_endpoint: endpoint.optional(),
  /**
   * The share of traces recorded, from 0 to 1 (default 1: every call). A trace that starts here (a call
   * without `traceparent`, a reconfiguration, a sync upload) is recorded with this probability; a call
   * whose caller sent `traceparent` follows the caller's decision.
   */
  sample_ratio: z.number({ error: 'must be a number from 0 to 1' }).min(0, { error: 'must be at least 0' }).max(1, { error: 'must be at most 1' }).default(1),
});

export type TracingConfig = z.output<typeof tracingConfigSchema>;
