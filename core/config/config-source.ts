// Where the runtime's machine config comes from: the local -config file (ConfigFile), or the cloud for
// an online machine (core/online/online-config.ts). The runtime treats both alike: read, diff, wait for
// the maintenance window, reconfigure.
import type { ConfigOrigin } from './config-edit.js';
import type { LoadedConfig } from './config-file.js';

export interface ConfigSource {
  /** The config to run now; throws InvalidConfigError naming every problem. */
  read(): LoadedConfig;
  /** Calls onChange whenever read() may return something new. */
  watch(onChange: () => void): Promise<void>;
  close(): Promise<void>;
  /** Why the source has no config to give (or only an outdated one), for the log and GetMachineStatus. */
  problem?(): string | undefined;
  /** Where the config comes from (RobotService.GetConfig), and where to edit it. */
  origin(): ConfigOrigin;
}
