// The floor of GetClassifications' shape on this machine, for bench:inference: the same path with nothing
// of the runtime's in it. A grpc-js server in its own process answers on its main thread by handing the
// request to worker A (where the vision service runs), which hands a ready 1x3x64x64 tensor to worker B
// (where the ML model service runs), which runs the same ONNX model with onnxruntime-web exactly as the
// bare anchor does; B answers A, A answers main, main answers the client. No PNG decode, no
// pre-processing, no post-processing, no runtime: what remains around the model is gRPC, the two thread
// hops each way that the shape requires (the model in the mlmodel service's own worker, each
// driver in its own worker), and what a model thread that sleeps between calls costs on this machine.
//
// Run as a program (`inference-floor.js MODEL.onnx`) it starts the server and prints
// `floor serving on <host:port>`; the workers are this same file, told their role in workerData.
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { MessageChannel, parentPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-web';

const SIZE = 64;
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

type Role = { role: 'model'; modelPath: string; port: MessagePort } | { role: 'vision'; up: MessagePort; down: MessagePort };

/** Worker B: the model, one session, one thread, as the bare anchor runs it. */
async function modelWorker(modelPath: string, port: MessagePort): Promise<void> {
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(readFileSync(modelPath));
  const input = session.inputNames[0];
  port.on('message', async (data: Float32Array) => {
    const out = await session.run({ [input]: new ort.Tensor('float32', data, [1, 3, SIZE, SIZE]) });
    const scores = Float32Array.from(out[session.outputNames[0]].data as Float32Array);
    port.postMessage(scores, [scores.buffer]);
  });
  parentPort!.postMessage('ready');
}

/** Worker A: a ready tensor (a copy of one made at start, as a fresh tensor per call moves away) to B and back. */
function visionWorker(up: MessagePort, down: MessagePort): void {
  const ready = Float32Array.from({ length: 3 * SIZE * SIZE }, () => Math.random());
  up.on('message', () => {
    down.once('message', (scores: Float32Array) => up.postMessage([{ className: scores[0] >= scores[1] ? 'a' : 'b', confidence: Math.max(...scores) }]));
    const tensor = ready.slice();
    down.postMessage(tensor, [tensor.buffer]);
  });
}

async function serve(modelPath: string): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const toModel = new MessageChannel();
  const toVision = new MessageChannel();
  const model = new Worker(self, { workerData: { role: 'model', modelPath, port: toModel.port2 }, transferList: [toModel.port2] });
  new Worker(self, { workerData: { role: 'vision', up: toVision.port2, down: toModel.port1 }, transferList: [toVision.port2, toModel.port1] });
  await new Promise((resolve) => model.once('message', resolve));
  const port = toVision.port1;
  const server = new Server();
  server.addService(floorService, {
    classify: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      port.once('message', (found: { className: string; confidence: number }[]) => callback(null, Buffer.from(JSON.stringify(found))));
      port.postMessage(call.request);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  console.log(`floor serving on 127.0.0.1:${bound}`);
}

const role = workerData as Role | undefined;
if (role?.role === 'model') await modelWorker(role.modelPath, role.port);
else if (role?.role === 'vision') visionWorker(role.up, role.down);
else if (process.argv[1] === fileURLToPath(import.meta.url)) await serve(process.argv[2]);
