// The resource access that the API adapters use, seen through sessions: a call carrying `platform-sid`
// refreshes its session (an expired one is refused), and a command to an actuator records which
// session (or none) commanded it last, so that the session's expiry knows what to stop. The call's span
// (tracing) is handed to the resource, so that its driver calls' spans are the call span's children.
import type { Api } from '../../plugins/api.js';
import type { Remote } from '../../plugins/contract.js';
import { actuationOf } from '../session/actuators.js';
import { callContext } from '../session/context.js';
import type { Sessions } from '../session/sessions.js';
import type { ResourceAccess } from './api-adapter.js';

export function sessionAccess(inner: ResourceAccess, sessions: Sessions): ResourceAccess {
  return {
    statuses: () => inner.statuses(),
    resource<T>(name: string, api: Api<T>): Remote<T> {
      const call = callContext.getStore();
      const session = call?.session;
      if (session) sessions.touch(session);
      const remote = inner.resource(name, api, call?.trace);
      const actuation = actuationOf(api);
      if (!actuation) return remote;
      return new Proxy(remote, {
        get(target, property, receiver) {
          const method = Reflect.get(target, property, receiver) as unknown;
          if (typeof property !== 'string' || !actuation.commands.has(property) || typeof method !== 'function') return method;
          // Recorded before the command runs: a GoFor still turning when its session expires must stop.
          return (...args: unknown[]) => {
            sessions.commanded(session, name, api);
            return (method as (...a: unknown[]) => unknown)(...args);
          };
        },
      });
    },
  };
}
