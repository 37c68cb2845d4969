// onnx_cpu in its worker: one onnxruntime-web session for the configured model, created when the
// resource is built, so a missing or broken model file is this resource's build error, not a later
// inference error.
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import * as ort from 'onnxruntime-web';
import type { MLModel, MLModelMetadata, TensorInfo, Tensors } from '../../../plugins/apis/mlmodel.js';
import { defineDriver } from '../../../plugins/driver.js';
import { DriverError, failedPrecondition, invalidArgument } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import type { OnnxCpuAttributes } from './model.js';
import { fromOrt, toOrt } from './tensors.js';

async function readModelFile(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw failedPrecondition(`${what} ${JSON.stringify(path)}: cannot be read (${code === 'ENOENT' ? 'no such file' : (err as Error).message})`);
  }
}

function info(name: string, meta: ort.InferenceSession.ValueMetadata | undefined, labelFile?: string): TensorInfo {
  const tensor = meta?.isTensor ? meta : undefined;
  return {
    name,
    description: '',
    dataType: tensor ? String(tensor.type) : '',
    shape: tensor ? tensor.shape.map((d) => (typeof d === 'number' ? d : -1)) : [],
    associatedFiles: labelFile ? [{ name: labelFile, description: 'one label per line, in the order of the last dimension', labelType: 'tensor_axis' }] : [],
  };
}

export default defineDriver<OnnxCpuAttributes, MLModel>(async ({ name, attributes, logger }) => {
  const bytes = await readModelFile(attributes.model_path, 'model_path');
  const labels = attributes.label_path
    ? (await readModelFile(attributes.label_path, 'label_path'))
        .toString('utf8')
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter(Boolean)
    : undefined;
  // The WASM thread count is per process (this worker); it must be set before the first session.
  ort.env.wasm.numThreads = attributes.num_threads;
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes);
  } catch (err) {
    throw failedPrecondition(`model_path ${JSON.stringify(attributes.model_path)}: not an ONNX model onnxruntime can load (${(err as Error).message})`);
  }
  const labelFile = attributes.label_path ? basename(attributes.label_path) : undefined;
  const metadata: MLModelMetadata = {
    name: basename(attributes.model_path, extname(attributes.model_path)),
    type: 'onnx',
    description: `ONNX model ${basename(attributes.model_path)} run by onnxruntime-web ${ort.env.versions.web ?? ''} (service ${name})`.trim(),
    inputInfo: session.inputNames.map((n, i) => info(n, session.inputMetadata[i])),
    // Labels name the classes of the outputs that have them: every output of a classifier, the scores of a detector.
    outputInfo: session.outputNames.map((n, i) => info(n, session.outputMetadata[i], n === 'boxes' ? undefined : labelFile)),
    labels,
  };
  logger.info('model loaded', { model_path: attributes.model_path, inputs: session.inputNames, outputs: session.outputNames });

  return {
    async infer(inputs: Tensors) {
      const feeds: Record<string, ort.Tensor> = {};
      for (const [input, tensor] of Object.entries(inputs)) {
        if (!session.inputNames.includes(input)) {
          throw invalidArgument(`input_tensors.${input}: the model has no such input (its inputs: ${session.inputNames.join(', ')})`);
        }
        feeds[input] = toOrt(input, tensor, ort.Tensor);
      }
      const missing = session.inputNames.filter((n) => !(n in feeds));
      if (missing.length) throw invalidArgument(`input_tensors: missing ${missing.join(', ')}`);
      let results: ort.InferenceSession.ReturnType;
      try {
        results = await session.run(feeds);
      } catch (err) {
        // onnxruntime's messages name the input and the dimension that do not fit.
        throw new DriverError('INVALID_ARGUMENT', `the model refused the inputs: ${(err as Error).message}`);
      }
      const outputs: Tensors = {};
      for (const [output, tensor] of Object.entries(results)) outputs[output] = fromOrt(output, tensor);
      return transfer(outputs, [...new Set(Object.values(outputs).map((t) => t.data.buffer as ArrayBuffer))]);
    },
    metadata() {
      return metadata;
    },
    async close() {
      await session.release();
    },
  };
});
