// The program's Prometheus metrics (one registry per process: platform-server or platform-cloud), served
// as text at /metrics on its web port (metrics-route.ts) and printed by -output-telemetry. Metrics are
// defined where they are measured; figures that other objects own (queues, sessions, backlogs) are read
// at scrape time from sources those objects register and remove (observe()).
//
// prom-client's index also loads its process metrics, which load @opentelemetry/api. The metric classes
// are loaded on their own here, and the process metrics (collectDefaultMetrics) at the first scrape, so
// that a program nobody scrapes loads no OpenTelemetry module at all.
import { createRequire } from 'node:module';
import type * as Prom from 'prom-client';

const require = createRequire(import.meta.url);
const Registry = require('prom-client/lib/registry') as typeof Prom.Registry;
const Counter = require('prom-client/lib/counter') as typeof Prom.Counter;
const Gauge = require('prom-client/lib/gauge') as typeof Prom.Gauge;
const Histogram = require('prom-client/lib/histogram') as typeof Prom.Histogram;

/** Seconds: from a fast unary call (0.5 ms) to a slow query or upload (30 s). */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type Labels = Record<string, string>;
/** One reading of a source: a number, or numbers per label set. */
export type Observation = number | readonly (readonly [Labels, number])[];
type Source = () => Observation | Promise<Observation>;

export const registry = new Registry();
let processMetrics: Promise<void> | undefined;

/** The registry as Prometheus text (format 0.0.4). The process metrics join at the first call. */
export async function metricsText(): Promise<string> {
  processMetrics ??= import('prom-client').then((prom) => prom.collectDefaultMetrics({ register: registry }));
  await processMetrics;
  return registry.metrics();
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Prom.Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets = LATENCY_BUCKETS): Prom.Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

/** Seconds since `started` (process.hrtime.bigint()). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/**
 * A metric whose value is read from registered sources at scrape time (summed when several sources
 * give the same labels). `kind` counter: the sources report running totals.
 */
export class Observed {
  private readonly sources = new Set<Source>();

  constructor(name: string, help: string, labelNames: readonly string[] = [], kind: 'gauge' | 'counter' = 'gauge') {
    const sources = this.sources;
    const collect = async function (this: Prom.Gauge | Prom.Counter) {
      this.reset();
      const readings = await Promise.all([...sources].map((source) => Promise.resolve(source()).catch(() => [] as Observation)));
      for (const reading of readings) {
        if (typeof reading === 'number') this.inc(reading);
        else for (const [labels, value] of reading) this.inc(labels, value);
      }
    };
    if (kind === 'counter') new Counter({ name, help, labelNames, registers: [registry], collect });
    else new Gauge({ name, help, labelNames, registers: [registry], collect });
  }

  /** Adds a source; the returned function removes it (when its owner closes). */
  observe(source: Source): () => void {
    this.sources.add(source);
    return () => {
      this.sources.delete(source);
    };
  }
}
