// Which APIs are actuators, for sessions and StopAll: a built-in api that declares an actuation
// (plugins/apis/), or a module's api whose module.json declares one (apis[i].actuator).
import { BUILT_IN_APIS } from '../../plugins/apis/index.js';
import type { Actuation } from '../../plugins/apis/declaration.js';

const BUILT_IN: ReadonlyMap<string, Actuation> = new Map(
  BUILT_IN_APIS.filter((declaration) => declaration.actuation).map((declaration) => [declaration.api, declaration.actuation!]),
);

/** Actuators that modules declare for their own APIs (module.json apis[i].actuator), by api. */
let fromModules: ReadonlyMap<string, Actuation> = new Map();

/** Replaces the module-declared actuators (called whenever the loaded modules change). */
export function setModuleActuations(actuations: ReadonlyMap<string, Actuation>): void {
  fromModules = actuations;
}

/** The actuation contract of an api, if it is an actuator. */
export const actuationOf = (api: string): Actuation | undefined => BUILT_IN.get(api) ?? fromModules.get(api);
