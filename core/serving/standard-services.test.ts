// Reflection on a real server, through real gRPC clients: its index is built on the first call, and
// both reflection versions answer.
import test from 'ava';
import { loadPackageDefinition, Server, ServerCredentials, credentials, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SensorServiceService } from '../../gen/platform/component/sensor/v1/sensor.js';
import { ReflectionService } from '@grpc/reflection';
import { addStandardServices, capture, REFLECTION_SERVICES } from './standard-services.js';

const protoRoot = join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto');

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

function reflectionClient(version: 'v1' | 'v1alpha', address: string): Client & { ServerReflectionInfo(): ClientDuplexStream<object, ReflectionResponse> } {
  const definition = loadSync(join(protoRoot, `grpc/reflection/${version}/reflection.proto`), {
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = loadPackageDefinition(definition) as never as {
    grpc: { reflection: Record<string, { ServerReflection: new (a: string, c: unknown) => never }> };
  };
  return new pkg.grpc.reflection[version].ServerReflection(address, credentials.createInsecure());
}

function ask(client: ReturnType<typeof reflectionClient>, request: object): Promise<ReflectionResponse> {
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo();
    stream.once('data', (response: ReflectionResponse) => {
      resolve(response);
      stream.end();
    });
    stream.once('error', reject);
    stream.write(request);
  });
}

test('reflection lists the services and serves their files, in v1 and v1alpha', async (t) => {
  const server = new Server();
  server.addService(SensorServiceService, { getReadings: () => undefined, doCommand: () => undefined } as never);
  const health = addStandardServices(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('localhost:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  t.teardown(() => server.forceShutdown());
  health.setStatus('', 'SERVING');

  for (const version of ['v1', 'v1alpha'] as const) {
    const client = reflectionClient(version, `localhost:${port}`);
    const listed = await ask(client, { listServices: '*' });
    const names = listed.listServicesResponse!.service.map((s) => s.name);
    t.true(names.includes('platform.component.sensor.v1.SensorService'), `${version} lists ${names.join(', ')}`);
    t.true(names.includes('platform.robot.v1.RobotService'));

    const file = await ask(client, { fileContainingSymbol: 'platform.component.sensor.v1.SensorService' });
    t.true(file.fileDescriptorResponse!.fileDescriptorProto.length > 0);
    t.true(Buffer.concat(file.fileDescriptorResponse!.fileDescriptorProto).includes('GetReadings'));

    const unknown = await ask(client, { fileContainingSymbol: 'no.such.Symbol' });
    t.is(unknown.errorResponse?.errorCode, 5, 'NOT_FOUND for a symbol that does not exist');
    client.close();
  }
});

test("the reflection services added before first use are the package's: same paths and streaming", (t) => {
  const added: { definition: Record<string, { path: string; requestStream: boolean; responseStream: boolean }> }[] = [];
  const recorder = { addService: (definition: never) => added.push({ definition }) } as unknown as Server;
  addStandardServices(recorder);
  const real = capture(new ReflectionService({}));
  const shape = (d: Record<string, { path: string; requestStream: boolean; responseStream: boolean }>) =>
    Object.entries(d).map(([name, m]) => [name, m.path, m.requestStream, m.responseStream]);
  t.deepEqual(
    added.slice(0, REFLECTION_SERVICES.length).map((a) => shape(a.definition)),
    real.map((r) => shape(r.definition as never)),
  );
});
