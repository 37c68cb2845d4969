// Every gRPC server of the platform (runtime, cloud) offers server reflection and the standard health
// service, so that grpcurl and load balancers work against it without extra setup.
import type { Server, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer, type PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { platformDescriptors } from './descriptors.js';

interface Registration {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** The services a ReflectionService would add, captured instead of added, so that they can be wrapped. */
function capture(reflection: ReflectionService): Registration[] {
  const added: Registration[] = [];
  reflection.addToServer({
    addService: (definition: ServiceDefinition, implementation: UntypedServiceImplementation) => added.push({ definition, implementation }),
  } as unknown as Server);
  return added;
}

/**
 * Reflection whose index is built on first use. Indexing every descriptor of the platform costs about
 * 300 ms of the main thread, which would otherwise delay every start; the first reflection call (from
 * grpcurl, say) pays it instead, once.
 */
export class LazyReflection {
  private handlers?: Registration[];
  /** Services served from protos outside the platform's descriptor set (modules' own APIs). */
  private extra: { definitions: PackageDefinition[]; services: string[] } = { definitions: [], services: [] };

  constructor(private readonly services?: string[]) {}

  /** Replaces the extra services; the index is rebuilt on the next reflection call. */
  setExtra(definitions: PackageDefinition[], services: string[]): void {
    this.extra = { definitions, services };
    this.handlers = undefined;
  }

  private real(): Registration[] {
    if (!this.handlers) {
      const merged: PackageDefinition = Object.assign(
        {},
        loadFileDescriptorSetFromBuffer(platformDescriptors(), { keepCase: true }),
        ...this.extra.definitions,
      );
      const services = this.services ? [...this.services, ...this.extra.services] : undefined;
      this.handlers = capture(new ReflectionService(merged, services ? { services } : undefined));
    }
    return this.handlers;
  }

  addToServer(server: Server): void {
    // An empty package gives the same service definitions (v1 and v1alpha) without indexing anything.
    capture(new ReflectionService({})).forEach(({ definition, implementation }, i) => {
      const lazy: UntypedServiceImplementation = {};
      for (const method of Object.keys(implementation)) {
        lazy[method] = ((call: unknown, callback: unknown) =>
          (this.real()[i].implementation[method] as (c: unknown, cb: unknown) => void)(call, callback)) as never;
      }
      server.addService(definition, lazy);
    });
  }
}

/** Adds reflection (for the listed services, or all) and health to a server, and returns the health service. */
export function addStandardServices(server: Server, services?: string[]): HealthImplementation {
  return addStandardServicesWithReflection(server, services).health;
}

/** The same, also returning the reflection, for a server whose set of services changes (module APIs). */
export function addStandardServicesWithReflection(server: Server, services?: string[]): { health: HealthImplementation; reflection: LazyReflection } {
  const reflection = new LazyReflection(services);
  reflection.addToServer(server);
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  health.addToServer(server);
  return { health, reflection };
}
