// -output-telemetry: the runtime's metrics (the /metrics exposition, core/serving/telemetry/README.md)
// printed to stderr every PLATFORM_TELEMETRY_INTERVAL_MS (default 15 s) and once more at stop, each block
// framed by a header line with the time. stderr, not stdout: stdout carries the JSON log lines (and the
// serving line the agent waits for), which a multi-line block would break for whoever parses them.
import { envNumber } from '../serving/env.js';
import { metricsText } from '../serving/telemetry/metrics.js';

export const TELEMETRY_INTERVAL_VARIABLE = 'PLATFORM_TELEMETRY_INTERVAL_MS';

export interface TelemetryOutput {
  /** Prints the last block and stops. */
  stop(): Promise<void>;
}

export function startTelemetryOutput(write: (text: string) => void = (text) => void process.stderr.write(text), env = process.env): TelemetryOutput {
  const intervalMs = envNumber(TELEMETRY_INTERVAL_VARIABLE, 15_000, 100, env)!;
  let printing = Promise.resolve();
  const print = () => {
    printing = printing
      .then(async () => {
        const text = await metricsText();
        write(`# platform-server telemetry at ${new Date().toISOString()}: metrics\n${text}# end of telemetry\n`);
      })
      .catch((err: unknown) => write(`# platform-server telemetry: the metrics could not be read: ${(err as Error).message}\n`));
    return printing;
  };
  const timer = setInterval(() => void print(), intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await print();
    },
  };
}
