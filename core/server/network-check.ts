// -network-check: run the network checks for the machine config, print them, and exit 0 or 1.
import { ConfigFile } from '../config/config-file.js';
import { InvalidConfigError, parseMachineConfig, type MachineConfig } from '../config/machine-config.js';
import { planNetworkChecks } from '../diagnostics/network-check/plan.js';
import { runNetworkChecks } from '../diagnostics/network-check/run.js';

/** Each probe's bound: long enough for a slow DNS server, short enough for a person waiting at a console. */
const CHECK_TIMEOUT_MS = 3000;

export async function networkCheck(configPath: string | undefined, print: (line: string) => void): Promise<number> {
  let config: MachineConfig;
  try {
    config = configPath ? new ConfigFile(configPath).read().config : parseMachineConfig({});
  } catch (err) {
    if (!(err instanceof InvalidConfigError)) throw err;
    print(err.report());
    return 1;
  }
  if (!configPath) print('no -config given: checking the default network settings');
  return (await runNetworkChecks(planNetworkChecks(config, CHECK_TIMEOUT_MS), print)) ? 0 : 1;
}
