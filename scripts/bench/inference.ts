// npm run bench:inference — GetClassifications per image through the real platform-server (PNG decode,
// the trainer's pre-processing, onnx_cpu in its own worker, post-processing, gRPC), against the same ONNX
// model run by onnxruntime-web in this bare Node process on a ready tensor, and against PyTorch eval, in
// the same run. All one thread, gRPC and bare in alternating rounds. Target: p50 over gRPC <= 1.3 x bare + 1 ms.
// A third anchor, in the same rounds, is the floor of that shape on this machine (inference-floor.ts): a
// gRPC call through a main thread and two worker hops to the same model run as the bare anchor runs it,
// with none of the runtime's code and no decode, pre- or post-processing.
import { execFileSync } from 'node:child_process';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { encode } from 'fast-png';
import * as ort from 'onnxruntime-web';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetClassificationsRequest, VisionServiceClient } from '../../gen/platform/service/vision/v1/vision.js';
import { spawnServing, type ServingProgram } from '../../core/serving/testing/spawn-serving.js';
import { floorService } from './inference-floor.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const SIZE = 64;

const percentile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const summary = (values: number[]) => ({ p50: percentile(values, 0.5), p99: percentile(values, 0.99) });

type Timed = () => Promise<unknown>;

async function timeRuns(fn: Timed, runs: number, into: number[]): Promise<void> {
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    into.push(performance.now() - t0);
  }
}

async function bare(modelPath: string): Promise<Timed> {
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(readFileSync(modelPath));
  const input = new ort.Tensor(
    'float32',
    Float32Array.from({ length: 3 * SIZE * SIZE }, () => Math.random()),
    [1, 3, SIZE, SIZE],
  );
  for (let i = 0; i < 20; i++) await session.run({ image: input });
  return () => session.run({ image: input });
}

interface Rounds {
  grpc: number[];
  bare: number[];
  floor: number[];
}

async function overGrpc(modelPath: string, labelPath: string, bareRun: Timed): Promise<Rounds> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-inference-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      network: { bind_address: 'localhost:0' },
      services: [
        { name: 'model', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: modelPath, label_path: labelPath } },
        { name: 'classifier', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'model' } },
      ],
    }),
  );
  const main = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
  const env = { ...process.env, PLATFORM_FTDC_DIR: mkdtempSync(join(tmpdir(), 'bench-ftdc-')) };
  const programs: ServingProgram[] = [];
  try {
    const runtime = await spawnServing(main, ['-config', configPath], { name: 'platform-server', env, servingLine: /platform-server serving on (\S+)/ });
    programs.push(runtime);
    const floorScript = fileURLToPath(new URL('./inference-floor.js', import.meta.url));
    const floorServer = await spawnServing(floorScript, [modelPath], { name: 'inference-floor', env, servingLine: /floor serving on (\S+)/ });
    programs.push(floorServer);
    const address = runtime.address;
    const vision = new VisionServiceClient(address, credentials.createInsecure());
    const pixels = Uint8Array.from({ length: SIZE * SIZE * 3 }, () => Math.floor(Math.random() * 256));
    const request = GetClassificationsRequest.fromPartial({
      name: 'classifier',
      image: Buffer.from(encode({ width: SIZE, height: SIZE, data: pixels, channels: 3, depth: 8 })),
      mimeType: 'image/png',
      n: 1,
    });
    const classify = () => new Promise<void>((resolve, reject) => vision.getClassifications(request, (err) => (err ? reject(err) : resolve())));
    // The services come up after the serving line: retry the first call until it answers.
    for (let i = 0; ; i++) {
      try {
        await classify();
        break;
      } catch (err) {
        if (i > 300) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    for (let i = 0; i < 20; i++) await classify();
    const Floor = makeGenericClientConstructor(floorService, 'Floor');
    const floorClient = new Floor(floorServer.address, credentials.createInsecure());
    const floorCall = () => new Promise<void>((resolve, reject) => floorClient.classify(request.image, (err: Error | null) => (err ? reject(err) : resolve())));
    for (let i = 0; i < 20; i++) await floorCall();
    // Alternate rounds of all three, so that load from other processes on a shared machine hits them alike.
    const rounds: Rounds = { grpc: [], bare: [], floor: [] };
    for (let round = 0; round < 10; round++) {
      await timeRuns(classify, RUNS / 10, rounds.grpc);
      await timeRuns(bareRun, RUNS / 10, rounds.bare);
      await timeRuns(floorCall, RUNS / 10, rounds.floor);
    }
    floorClient.close();
    return rounds;
  } finally {
    await Promise.all(programs.map((p) => p.stop()));
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-inference-model-'));
  const modelPath = join(dir, 'model.onnx');
  const labelPath = join(dir, 'labels.txt');
  writeFileSync(labelPath, 'a\nb\n');
  const script = fileURLToPath(new URL('./inference-torch.py', import.meta.url)).replace('/dist/', '/');
  const torch = JSON.parse(
    execFileSync(PYTHON, [script, modelPath, String(RUNS)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .at(-1)!,
  );
  const runs = await overGrpc(modelPath, labelPath, await bare(modelPath));
  const bareRun = summary(runs.bare);
  const grpc = summary(runs.grpc);
  const floor = summary(runs.floor);
  const fmt = (s: { p50: number; p99: number }) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`;
  console.log(`model: the built-in trainer's classifier (2 labels), input 1x3x${SIZE}x${SIZE}, ${RUNS} runs each, one thread`);
  console.log(`  GetClassifications over gRPC (PNG decode, pre-processing, onnx_cpu worker, post-processing): ${fmt(grpc)}`);
  console.log(`  onnxruntime-web, bare Node process, ready tensor (anchor):                             ${fmt(bareRun)}`);
  console.log(
    `  PyTorch eval (python3-torch), ready tensor:                                            p50 ${torch.p50_ms.toFixed(2)} ms, p99 ${torch.p99_ms.toFixed(2)} ms`,
  );
  console.log(`  floor of this shape (gRPC, main thread, two worker hops, the bare model run; no runtime):     ${fmt(floor)}`);
  const target = 1.3 * bareRun.p50 + 1;
  console.log(
    `ratio gRPC / bare: p50 ${(grpc.p50 / bareRun.p50).toFixed(2)}x, p99 ${(grpc.p99 / bareRun.p99).toFixed(2)}x; ` +
      `target p50 <= 1.3 x bare + 1 ms = ${target.toFixed(2)} ms: ${grpc.p50 <= target ? 'met' : 'NOT met'}`,
  );
  console.log(
    `time around the model, p50: GetClassifications ${(grpc.p50 - bareRun.p50).toFixed(2)} ms, the floor ${(floor.p50 - bareRun.p50).toFixed(2)} ms, ` +
      `the target's allowance ${(target - bareRun.p50).toFixed(2)} ms; the floor alone ${floor.p50 <= target ? 'fits within' : 'does NOT fit within'} the target; ` +
      `GetClassifications / floor ${(grpc.p50 / floor.p50).toFixed(2)}x`,
  );
}

await main();
