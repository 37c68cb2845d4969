// Test helper: a gRPC server reflection (v1) client, to ask a real server what it lists.
import { credentials, loadPackageDefinition, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const protoRoot = join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto');

type ReflectionClient = Client & { ServerReflectionInfo(): ClientDuplexStream<object, { listServicesResponse?: { service: { name: string }[] } }> };

/** The service names that the server at `address` lists through reflection. */
export async function listServices(address: string): Promise<string[]> {
  const definition = loadSync(join(protoRoot, 'grpc/reflection/v1/reflection.proto'), {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = loadPackageDefinition(definition) as never as {
    grpc: { reflection: { v1: { ServerReflection: new (a: string, c: unknown) => ReflectionClient } } };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const stream = client.ServerReflectionInfo();
      stream.once('data', (response) => {
        resolve(response.listServicesResponse?.service.map((s: { name: string }) => s.name) ?? []);
        stream.end();
      });
      stream.once('error', reject);
      stream.write({ listServices: '*' });
    });
  } finally {
    client.close();
  }
}
