// Every gRPC server of the platform (runtime, cloud) offers server reflection and the standard health
// service, so that grpcurl and load balancers work against it without extra setup.
import type { MethodDefinition, Server, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer, type PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { platformDescriptors } from './descriptors.js';

interface Registration {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** The services a ReflectionService adds, in its order (v1, then v1alpha), each with one bidi-streaming method. */
export const REFLECTION_SERVICES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'] as const;
const METHOD = 'ServerReflectionInfo';

/** The services a ReflectionService would add, captured instead of added, so that they can be wrapped. */
export function capture(reflection: ReflectionService): Registration[] {
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
    // Nothing of reflection is built until its first call, not even its own messages' codecs: the
    // package parses reflection.proto (v1 and v1alpha) with protobufjs to make them, about 1 MB of the
    // heap that a runtime nobody asks would carry for ever (core/micro/README.md). The definitions added
    // here name the same methods (REFLECTION_SERVICES, checked against the package's in the test) and
    // hand every message to the real ones, made on first use.
    REFLECTION_SERVICES.forEach((service, i) => {
      const real = (): MethodDefinition<unknown, unknown> => this.real()[i].definition[METHOD] as MethodDefinition<unknown, unknown>;
      const definition: ServiceDefinition = {
        [METHOD]: {
          path: `/${service}/${METHOD}`,
          requestStream: true,
          responseStream: true,
          requestSerialize: (value: unknown) => real().requestSerialize(value),
          requestDeserialize: (bytes: Buffer) => real().requestDeserialize(bytes),
          responseSerialize: (value: unknown) => real().responseSerialize(value),
          responseDeserialize: (bytes: Buffer) => real().responseDeserialize(bytes),
        },
      };
      const implementation: UntypedServiceImplementation = {
        [METHOD]: ((call: unknown) => (this.real()[i].implementation[METHOD] as (c: unknown) => void)(call)) as never,
      };
      server.addService(definition, implementation);
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
