// How an API is served: a generated service definition plus handlers built over a ResourceAccess.
// The gRPC layer reaches drivers only through proxies; it never sees workers or the kernel's internals.
import type { ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { ResourceAccess } from '../kernel/resource-access.js';
import { invalidArgument } from '../serving/status-error.js';

// Re-exported so that adapters import everything they build on from this one file.
export type { ResourceAccess };

export interface ApiAdapter {
  /** The fully qualified service name, for reflection and health. */
  readonly serviceName: string;
  readonly definition: ServiceDefinition;
  implementation(access: ResourceAccess): UntypedServiceImplementation;
}

/** A name field must be set: say so rather than looking up the empty name. */
export function requireName(name: string | undefined, field = 'name'): string {
  if (!name) throw invalidArgument(`${field} is required`);
  return name;
}
