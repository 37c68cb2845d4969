// Starts the runtime's tracing from the machine config's `tracing` section (read at start). The SDK is
// imported only here, only when `enabled`; -output-telemetry prints the spans on stderr with the metrics.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TracingConfig } from '../config/tracing-config.js';

export interface MachineTracing {
  shutdown(): Promise<void>;
}

/** Where a driver worker's spans go (the data manager's sync uploads), or undefined when tracing is off. */
export function workerTracingOf(
  config: TracingConfig | undefined,
  outputTelemetry: boolean,
  env: NodeJS.ProcessEnv = process.env,
): { otlp_endpoint?: string; console: boolean; disk_dir?: string; sample_ratio: number } | undefined {
  if (!config?.enabled) return undefined;
  return {
    otlp_endpoint: config.otlp_endpoint,
    console: config.console || outputTelemetry,
    disk_dir: config.disk ? traceDir(env) : undefined,
    sample_ratio: config.sample_ratio,
  };
}

const traceDir = (env: NodeJS.ProcessEnv) => env.PLATFORM_TRACE_DIR ?? join(homedir(), '.platform', 'traces');

export async function startMachineTracing(
  config: TracingConfig | undefined,
  outputTelemetry: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MachineTracing | undefined> {
  if (!config?.enabled) return undefined;
  const { startTracing } = await import('../serving/telemetry/tracing.js');
  const { observeTracing } = await import('../serving/telemetry/trace-metrics.js');
  const tracing = await startTracing({
    serviceName: 'platform-server',
    otlpEndpoint: config.otlp_endpoint,
    console: config.console || outputTelemetry ? process.stderr : undefined,
    diskDir: config.disk ? traceDir(env) : undefined,
    sampleRatio: config.sample_ratio,
    // No AsyncLocalStorage context manager: on Node 20 its async hook costs every promise of the runtime
    // (most of tracing's cost on a GetReadings call, bench:telemetry). The gRPC call's span reaches the
    // driver call explicitly (grpc-tracing.ts callTraceContext, core/session/context.ts).
    asyncContext: false,
  });
  const unobserve = observeTracing(tracing);
  return {
    shutdown: async () => {
      unobserve();
      await tracing.shutdown();
    },
  };
}
