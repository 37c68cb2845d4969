// Which APIs are actuators, for sessions and StopAll: an api whose contract declares a Stop, with the
// methods that set it moving. Only those methods make a session "the last to command" a resource;
// reads (IsPowered, GetPosition) and Stop itself do not.
import { MOTOR_API } from '../../plugins/apis/motor.js';

export interface Actuation {
  /** The driver method that stops the resource. */
  readonly stop: string;
  /** The driver methods that command it. */
  readonly commands: ReadonlySet<string>;
}

const BUILT_IN: ReadonlyMap<string, Actuation> = new Map([[MOTOR_API, { stop: 'stop', commands: new Set(['setPower', 'goFor', 'goTo', 'setRPM']) }]]);

/** Actuators that modules declare for their own APIs (module.json apis[i].actuator), by api. */
let fromModules: ReadonlyMap<string, Actuation> = new Map();

/** Replaces the module-declared actuators (called whenever the loaded modules change). */
export function setModuleActuations(actuations: ReadonlyMap<string, Actuation>): void {
  fromModules = actuations;
}

/** The actuation contract of an api, if it is an actuator. */
export const actuationOf = (api: string): Actuation | undefined => BUILT_IN.get(api) ?? fromModules.get(api);
