// The sessions of a running machine, as both runtimes compose them: a new session's heartbeat window
// comes from the running config's `session` section, and an expired session's actuators are stopped
// through the machine with the stop method their API declares (actuators.ts).
import type { DriverLogger } from '../../plugins/driver.js';
import type { Machine } from '../kernel/machine.js';
import { heartbeatWindowMs, type SessionConfig } from '../config/session-config.js';
import { actuationOf } from './actuators.js';
import { Sessions } from './sessions.js';

export function machineSessions(machine: Pick<Machine, 'resource'>, session: () => SessionConfig | undefined, log: DriverLogger): Sessions {
  return new Sessions(
    () => heartbeatWindowMs(session()),
    async (name, api) => {
      const remote = machine.resource<Record<string, () => Promise<void>>>(name, api);
      await remote[actuationOf(api)!.stop]();
    },
    log,
  );
}
