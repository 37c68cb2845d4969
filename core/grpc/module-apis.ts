// APIs that modules define with their own .proto (module.json `apis`): the runtime loads the proto,
// serves the service, and forwards each unary call to the driver of the resource named in the request's
// `name` field, as the method of the same name in lower camel case (Spin -> spin(request)). The driver
// answers a plain object that the service's response message is built from.
import { status, type Server, type ServiceDefinition, type UntypedServiceImplementation, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { dirname } from 'node:path';
import { unary } from './unary.js';
import { requireName, type ResourceAccess } from './api-adapter.js';
import { StatusError } from '../serving/status-error.js';
import { defineApi } from '../../plugins/api.js';
import type { Actuation } from '../../plugins/apis/declaration.js';

export interface ModuleApi {
  moduleId: string;
  /** The resource api, e.g. acme:component:widget. */
  api: string;
  /** Absolute path of the .proto file. */
  proto: string;
  /** Fully qualified service name, e.g. acme.widget.v1.WidgetService. */
  service: string;
  /** RPC names: the Stop of an actuator and the RPCs that command it (module.json apis[i].actuator). */
  actuator?: { stop: string; commands: string[] };
}

/** Driver method names (lower camel case) of a module API's actuator, for sessions and StopAll. */
export function moduleActuation(api: ModuleApi): Actuation | undefined {
  if (!api.actuator) return undefined;
  return { stop: lowerCamel(api.actuator.stop), commands: new Set(api.actuator.commands.map(lowerCamel)) };
}

export interface LoadedModuleApi {
  api: ModuleApi;
  definition: ServiceDefinition;
  /** For reflection: the proto's descriptors. */
  packageDefinition: PackageDefinition;
}

function lowerCamel(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** Loads a module's proto and finds its service. Throws an Error naming the module, file and problem. */
export function loadModuleApi(api: ModuleApi): LoadedModuleApi {
  let packageDefinition: PackageDefinition;
  try {
    packageDefinition = loadSync(api.proto, { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(api.proto)] });
  } catch (err) {
    throw new Error(`module ${api.moduleId}: ${api.proto} cannot be loaded: ${(err as Error).message}`, { cause: err });
  }
  const definition = packageDefinition[api.service] as ServiceDefinition | undefined;
  if (!definition || typeof definition !== 'object' || !Object.values(definition).every((m) => typeof m === 'object' && 'path' in m)) {
    throw new Error(`module ${api.moduleId}: ${api.proto} defines no service ${api.service}`);
  }
  return { api, definition, packageDefinition };
}

/** Handlers that forward every unary method to the named resource's driver (streaming: UNIMPLEMENTED). */
export function moduleApiImplementation(loaded: LoadedModuleApi, access: ResourceAccess): UntypedServiceImplementation {
  const implementation: UntypedServiceImplementation = {};
  for (const [method, spec] of Object.entries(loaded.definition)) {
    if (spec.requestStream || spec.responseStream) {
      implementation[method] = ((_call: unknown, callback: sendUnaryData<unknown>) =>
        callback({ code: status.UNIMPLEMENTED, details: `${loaded.api.service}/${method}: streaming methods of module APIs are not supported` })) as never;
      continue;
    }
    implementation[method] = unary<Record<string, unknown>, unknown>(async (request) => {
      if (!('name' in request))
        throw new StatusError(status.FAILED_PRECONDITION, `${loaded.api.service}/${method}: its request has no name field, so no resource can be named`);
      const name = requireName(request.name as string | undefined);
      const driver = access.resource(name, defineApi<Record<string, (r: unknown) => Promise<unknown>>>(loaded.api.api));
      return (await driver[lowerCamel(method)](request)) ?? {};
    }) as (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void as never;
  }
  return implementation;
}

/** The module APIs a server serves, kept in step with the loaded modules. */
export class ModuleApiServices {
  private readonly served = new Map<string, LoadedModuleApi>();

  constructor(
    private readonly server: Server,
    private readonly access: ResourceAccess,
    private readonly onChange: (served: LoadedModuleApi[]) => void,
  ) {}

  /** Serves exactly `apis` (adding new ones, removing gone ones); returns the errors of those that failed. */
  update(apis: readonly ModuleApi[]): Error[] {
    const errors: Error[] = [];
    const key = (a: ModuleApi) => `${a.service} ${a.proto}`;
    const wanted = new Map(apis.map((a) => [key(a), a]));
    for (const [k, loaded] of this.served) {
      if (wanted.has(k)) continue;
      this.server.removeService(loaded.definition);
      this.served.delete(k);
    }
    for (const [k, api] of wanted) {
      if (this.served.has(k)) continue;
      if ([...this.served.values()].some((l) => l.api.service === api.service)) {
        errors.push(new Error(`module ${api.moduleId}: service ${api.service} is already served by another module`));
        continue;
      }
      try {
        const loaded = loadModuleApi(api);
        this.server.addService(loaded.definition, moduleApiImplementation(loaded, this.access));
        this.served.set(k, loaded);
      } catch (err) {
        errors.push(err as Error);
      }
    }
    this.onChange([...this.served.values()]);
    return errors;
  }
}
