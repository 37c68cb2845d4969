// A driver's `dependencies` (plugins/driver.ts), the same wherever the driver runs: in its own worker
// (driver-host.ts, proxies over MessagePorts) or in platform-micro-server's main thread (proxies that
// call the dependency's driver directly). A driver that asks for a name it does not depend on, or for a
// dependency under another API, gets the same error in both.
import type { Dependencies, Remote } from '../../plugins/driver.js';
import { DriverError } from '../../plugins/errors.js';

export function driverDependencies(owner: string, dependencies: readonly { name: string; api: string; remote: Remote<unknown> }[]): Dependencies {
  const byName = new Map(dependencies.map((d) => [d.name, d]));
  return {
    get<T>(api: string, name: string): Remote<T> {
      const dependency = byName.get(name);
      if (!dependency) throw new DriverError('FAILED_PRECONDITION', `${name} is not a dependency of ${owner}`, owner);
      if (dependency.api !== api) {
        throw new DriverError('FAILED_PRECONDITION', `dependency ${JSON.stringify(name)} of ${owner} is a ${dependency.api}, not a ${api}`, owner);
      }
      return dependency.remote as never as Remote<T>;
    },
    names: () => [...byName.keys()],
  };
}
