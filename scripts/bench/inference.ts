// npm run bench:inference — GetClassifications per image through the real platform-server (PNG decode,
// the trainer's pre-processing, onnx_cpu in its own worker, post-processing, gRPC), against the same ONNX
// model run by onnxruntime-web in this bare Node process on a ready tensor, and against PyTorch eval, in
// the same run. All one thread, gRPC and bare in alternating rounds. Target: p50 over gRPC <= 1.3 x bare + 1 ms.
import { execFileSync, spawn } from 'node:child_process';
import { credentials } from '@grpc/grpc-js';
import { encode } from 'fast-png';
import * as ort from 'onnxruntime-web';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetClassificationsRequest, VisionServiceClient } from '../../gen/platform/service/vision/v1/vision.js';

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

async function overGrpc(modelPath: string, labelPath: string, bareRun: Timed): Promise<{ grpc: number[]; bare: number[] }> {
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
  const child = spawn(process.execPath, [main, '-config', configPath], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    let text = '';
    const address = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        text += d.toString();
        const match = /platform-server serving on (\S+)/.exec(text);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`platform-server exited ${code}`)));
    });
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
    // Alternate rounds of both, so that load from other processes on a shared machine hits both alike.
    const grpc: number[] = [];
    const bareTimes: number[] = [];
    for (let round = 0; round < 10; round++) {
      await timeRuns(classify, RUNS / 10, grpc);
      await timeRuns(bareRun, RUNS / 10, bareTimes);
    }
    return { grpc, bare: bareTimes };
  } finally {
    child.kill('SIGTERM');
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
  const fmt = (s: { p50: number; p99: number }) => `p50 ${s.p50.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms`;
  console.log(`model: the built-in trainer's classifier (2 labels), input 1x3x${SIZE}x${SIZE}, ${RUNS} runs each, one thread`);
  console.log(`  GetClassifications over gRPC (PNG decode, pre-processing, onnx_cpu worker, post-processing): ${fmt(grpc)}`);
  console.log(`  onnxruntime-web, bare Node process, ready tensor (anchor):                             ${fmt(bareRun)}`);
  console.log(
    `  PyTorch eval (python3-torch), ready tensor:                                            p50 ${torch.p50_ms.toFixed(2)} ms, p99 ${torch.p99_ms.toFixed(2)} ms`,
  );
  const target = 1.3 * bareRun.p50 + 1;
  console.log(
    `ratio gRPC / bare: p50 ${(grpc.p50 / bareRun.p50).toFixed(2)}x, p99 ${(grpc.p99 / bareRun.p99).toFixed(2)}x; ` +
      `target p50 <= 1.3 x bare + 1 ms = ${target.toFixed(2)} ms: ${grpc.p50 <= target ? 'met' : 'NOT met'}`,
  );
}

await main();
