// -ftdc wiring: full-time data capture of this runtime's process and of its machine's resources.
import { FtdcCapture } from '../diagnostics/ftdc/capture.js';
import { FTDC_FILE_BYTES, FTDC_FILES, FTDC_INTERVAL_MS, FTDC_SYNC_EVERY, ftdcDirectory } from '../diagnostics/ftdc/location.js';
import type { Machine } from '../kernel/machine.js';
import type { LevelName } from '../config/log-rules.js';
import type { LogSink } from '../logging/sink.js';

export function startFtdc(machine: Machine, sink: LogSink, level: () => LevelName, env: NodeJS.ProcessEnv = process.env): FtdcCapture | undefined {
  return FtdcCapture.start({
    dir: ftdcDirectory(env),
    intervalMs: FTDC_INTERVAL_MS,
    maxFileBytes: FTDC_FILE_BYTES,
    maxFiles: FTDC_FILES,
    syncEveryLines: FTDC_SYNC_EVERY,
    // Governed by the config's `log` rules like the runtime's other loggers (core/logging/RULES.md).
    log: sink.logger('platform.ftdc', level),
    resources: () => machine.statistics().map((s) => ({ key: s.key, state: s.state, revision: s.revision, worker_alive: s.workerAlive, calls: s.calls })),
  });
}
