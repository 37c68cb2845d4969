// platform-micro-server serves no /metrics (it has no web port), so its bundle carries no Prometheus
// client: scripts/build-micro.mjs puts this module in the place of core/serving/telemetry/metrics.ts.
// Same exports, typed against the real module; every metric is a no-op and the registry is empty.
import type * as Metrics from '../serving/telemetry/metrics.js';

export type { Labels, Observation } from '../serving/telemetry/metrics.js';

export const LATENCY_BUCKETS: typeof Metrics.LATENCY_BUCKETS = [];
export const METRICS_CONTENT_TYPE: typeof Metrics.METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const noop = new Proxy({}, { get: () => () => undefined });
export const registry = noop as typeof Metrics.registry;
export const metricsText: typeof Metrics.metricsText = async () => '';
export const counter = (() => noop) as unknown as typeof Metrics.counter;
export const histogram = (() => noop) as unknown as typeof Metrics.histogram;
export const secondsSince: typeof Metrics.secondsSince = (started) => Number(process.hrtime.bigint() - started) / 1e9;

export class Observed implements Pick<Metrics.Observed, 'observe'> {
  constructor(_name: string, _help: string, _labelNames: readonly string[] = [], _kind: 'gauge' | 'counter' = 'gauge') {}

  observe(): () => void {
    return () => undefined;
  }
}
