// The floor of GetClassifications' shape on this machine, for bench:inference: the same path with no work
// in it. A grpc-js server in its own process answers on its main thread by handing the request bytes to
// worker A (the vision service's worker), which hands a 1x3x64x64 float tensor to worker B (the model's
// worker), which stays busy for as long as the bare model run takes and answers with two floats; A answers
// main, main answers the client. No PNG decode, no pre-processing, no model: what remains is gRPC and the
// two thread hops each way, which the shape (the model in the mlmodel service's own worker, each
// driver in its own worker) requires.
//
// Run as a program it starts the server and prints `floor serving on <host:port>`.
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import { MessageChannel, Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

const bytes = (b: Buffer) => b;
/** One unary method whose request and response are raw bytes. */
export const floorService: ServiceDefinition = {
  classify: {
    path: '/platform.bench.Floor/Classify',
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  },
};

/** Worker B: busy for the asked time (the model's compute), then two floats back (its output tensor). */
const modelWorker = `
const { parentPort } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
parentPort.once('message', (port) => port.on('message', ({ input, busyMs }) => {
  const t0 = performance.now();
  while (performance.now() - t0 < busyMs);
  const out = new Float32Array([input.length, busyMs]);
  port.postMessage(out, [out.buffer]);
}));`;

/** Worker A: a tensor of the model's input size to B and back, then a classification to main. */
const visionWorker = `
const { parentPort } = require('node:worker_threads');
parentPort.once('message', ({ up, down }) => {
  up.on('message', ({ image, busyMs }) => {
    down.once('message', (out) => up.postMessage([{ className: 'a', confidence: out[0] > 0 ? 1 : 0 }]));
    const input = new Float32Array(3 * 64 * 64);
    input[0] = image.length;
    down.postMessage({ input, busyMs }, [input.buffer]);
  });
});`;

async function serve(): Promise<void> {
  const model = new Worker(modelWorker, { eval: true });
  const vision = new Worker(visionWorker, { eval: true });
  const toModel = new MessageChannel();
  const toVision = new MessageChannel();
  model.postMessage(toModel.port2, [toModel.port2]);
  vision.postMessage({ up: toVision.port2, down: toModel.port1 }, [toVision.port2, toModel.port1]);
  const port = toVision.port1;
  const server = new Server();
  server.addService(floorService, {
    classify: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      const busyMs = Number(call.metadata.get('busy-ms')[0] ?? 0);
      port.once('message', (found: { className: string; confidence: number }[]) => callback(null, Buffer.from(JSON.stringify(found))));
      port.postMessage({ image: call.request, busyMs });
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  console.log(`floor serving on 127.0.0.1:${bound}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await serve();
