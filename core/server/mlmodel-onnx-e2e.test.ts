// onnx_cpu end to end: the real platform-server, the real MLModelService client.
import test from 'ava';
import { status, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LabelType, MLModelServiceClient } from '../../gen/platform/service/mlmodel/v1/mlmodel.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from './testing/spawn-runtime.js';
import { channelMeansSoftmax, writeChannelMeansModel } from '../../drivers/mlmodel/testing/tiny-onnx.js';

const dir = mkdtempSync(join(tmpdir(), 'onnx-cpu-'));
const modelPath = join(dir, 'means.onnx');
const labelPath = join(dir, 'labels.txt');
const notOnnx = join(dir, 'text.onnx');

let runtime: SpawnedRuntime;
let client: MLModelServiceClient;
test.before(async () => {
  writeChannelMeansModel(modelPath, 4);
  writeFileSync(labelPath, 'red\ngreen\nblue\n');
  writeFileSync(notOnnx, 'this is not a model');
  runtime = await spawnRuntime({
    services: [
      { name: 'means', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: modelPath, label_path: labelPath } },
      { name: 'missing', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: join(dir, 'nope.onnx') } },
      { name: 'text', api: 'core:service:mlmodel', model: 'onnx_cpu', attributes: { model_path: notOnnx } },
    ],
  });
  client = new MLModelServiceClient(runtime.address, insecure());
});
test.after.always(() => runtime?.stop());

const f32 = (values: number[]) => Buffer.from(Float32Array.from(values).buffer);

test('Metadata names, types and shapes the inputs and outputs, with the label file', async (t) => {
  const { metadata } = await call(client, 'metadata', { name: 'means' });
  t.is(metadata.name, 'means');
  t.is(metadata.type, 'onnx');
  t.deepEqual(
    metadata.inputInfo.map((i: { name: string; dataType: string; shape: number[] }) => [i.name, i.dataType, i.shape]),
    [['image', 'float32', [-1, 3, 4, 4]]],
  );
  const [out] = metadata.outputInfo;
  t.deepEqual([out.name, out.dataType, out.shape], ['probabilities', 'float32', [-1, 3]]);
  t.is(out.associatedFiles[0].name, 'labels.txt');
  t.is(out.associatedFiles[0].labelType, LabelType.LABEL_TYPE_TENSOR_AXIS);
});

test('Infer runs the model on named, typed, shaped tensors', async (t) => {
  const batch = Float32Array.from({ length: 2 * 48 }, (_, i) => ((i * 37) % 11) / 10);
  const { outputTensors } = await call(client, 'infer', {
    name: 'means',
    inputTensors: { image: { dataType: 'float32', shape: [2, 3, 4, 4], data: Buffer.from(batch.buffer) } },
  });
  const out = outputTensors.probabilities;
  t.is(out.dataType, 'float32');
  t.deepEqual(out.shape.map(Number), [2, 3]);
  const data = new Float32Array(new Uint8Array(out.data).buffer);
  const expected = [...channelMeansSoftmax(batch.subarray(0, 48), 4), ...channelMeansSoftmax(batch.subarray(48), 4)];
  expected.forEach((e, i) => t.true(Math.abs(data[i] - e) < 1e-5, `element ${i}: ${data[i]} vs ${e}`));
});

test('bad tensors are INVALID_ARGUMENT naming the input and the rule', async (t) => {
  const infer = (inputTensors: unknown) => t.throwsAsync(call(client, 'infer', { name: 'means', inputTensors })) as Promise<ServiceError>;
  const short = await infer({ image: { dataType: 'float32', shape: [1, 3, 4, 4], data: f32([1, 2, 3]) } });
  t.is(short.code, status.INVALID_ARGUMENT);
  t.regex(short.details, /input_tensors\.image: shape \[1,3,4,4\] of float32 needs 192 bytes of data, got 12/);
  const type = await infer({ image: { dataType: 'complex', shape: [1], data: f32([1]) } });
  t.regex(type.details, /input_tensors\.image\.data_type "complex": must be one of float32/);
  const unknown = await infer({ picture: { dataType: 'float32', shape: [1], data: f32([1]) } });
  t.regex(unknown.details, /input_tensors\.picture: the model has no such input \(its inputs: image\)/);
  const missing = await infer({});
  t.regex(missing.details, /input_tensors: missing image/);
  const wrongShape = await infer({ image: { dataType: 'float32', shape: [1, 3, 2, 2], data: f32(new Array(12).fill(0)) } });
  t.is(wrongShape.code, status.INVALID_ARGUMENT);
});

test("a missing or non-ONNX model file is that resource's error; the others keep running", async (t) => {
  const robot = new RobotServiceClient(runtime.address, insecure());
  const errorOf = async (name: string) => {
    for (let i = 0; i < 600; i++) {
      const s = (await call(robot, 'getMachineStatus', {})).resources.find((r: { name: { name: string } }) => r.name.name === name);
      if (s?.error) return s.error as string;
      await new Promise((r) => setTimeout(r, 100));
    }
    return runtime.output();
  };
  t.regex(await errorOf('missing'), /model_path ".*nope\.onnx": cannot be read \(no such file\)/);
  t.regex(await errorOf('text'), /model_path ".*text\.onnx": not an ONNX model onnxruntime can load/);
  const unavailable = (await t.throwsAsync(call(client, 'metadata', { name: 'missing' }))) as ServiceError;
  t.not(unavailable.code, status.OK);
  t.is((await call(client, 'metadata', { name: 'means' })).metadata.name, 'means');
});
