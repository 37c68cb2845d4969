// What an API declares once, beside its token and interface (plugins/apis/<api>.ts): whether it is an
// actuator (for sessions and StopAll) and which capture methods every resource of it has. Modules declare
// the same for their own APIs in module.json (apis[i].actuator, captureMethods); the runtime's tables
// (core/session/actuators.ts, core/resource/capture-methods.ts) are read from these declarations.
import type { ApiCaptureMethod } from '../capture.js';

/** An actuator's contract: the driver method that stops it, and the ones that set it moving. */
export interface Actuation {
  /** The driver method that stops the resource. */
  readonly stop: string;
  /**
   * The driver methods that command it. Only these make a session "the last to command" a resource;
   * reads (IsPowered, GetPosition) and Stop itself do not.
   */
  readonly commands: ReadonlySet<string>;
}

export interface ApiDeclaration {
  /** The API's name (its token). */
  readonly api: string;
  /** Set when the API is an actuator. */
  readonly actuation?: Actuation;
  /** Capture methods by name (`Readings`, `GetImage`), as the data manager's config names them. */
  readonly capture?: Readonly<Record<string, ApiCaptureMethod>>;
}
