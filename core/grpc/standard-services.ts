// Every gRPC server of the platform (runtime, cloud) offers server reflection and the standard health
// service, so that grpcurl and load balancers work against it without extra setup.
import type { Server } from '@grpc/grpc-js';
import { loadFileDescriptorSetFromBuffer } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { readFileSync } from 'node:fs';

// gen/descriptors.binpb is written by `npm run gen` (buf build); dist/ carries a copy next to dist/core.
const descriptorsUrl = new URL('../../gen/descriptors.binpb', import.meta.url);

let descriptors: ReturnType<typeof loadFileDescriptorSetFromBuffer> | undefined;

/** Adds reflection (for the listed services, or all) and health to a server, and returns the health service. */
export function addStandardServices(server: Server, services?: string[]): HealthImplementation {
  descriptors ??= loadFileDescriptorSetFromBuffer(readFileSync(descriptorsUrl), { keepCase: true });
  new ReflectionService(descriptors, services ? { services } : undefined).addToServer(server);
  const health = new HealthImplementation({ '': 'NOT_SERVING' });
  health.addToServer(server);
  return health;
}
