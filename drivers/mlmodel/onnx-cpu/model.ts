// The onnx_cpu ML model service: runs an ONNX model with onnxruntime-web (WASM, CPU) in the service's own
// worker, one inference session per model.
import * as z from 'zod';
import { MLMODEL_API } from '../../../plugins/apis/mlmodel.js';
import { defineModel } from '../../../plugins/contract.js';

export const onnxCpuAttributes = z.strictObject({
  /** The .onnx file. May use ${packages.NAME} (the folder of an installed package). */
  model_path: z.string().min(1, 'must be the path of an .onnx file'),
  /** Optional labels file: one label per line, in the order of the output's last dimension. */
  label_path: z.string().min(1, 'must be a path').optional(),
  /** WASM threads for this model's session. */
  num_threads: z.number().int('must be an integer').min(1, 'must be at least 1').max(64, 'must be at most 64').default(1),
});

export type OnnxCpuAttributes = z.output<typeof onnxCpuAttributes>;

export const onnxCpuModel = defineModel({
  api: MLMODEL_API,
  model: 'onnx_cpu',
  attributes: onnxCpuAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'Runs an ONNX model on the CPU with onnxruntime-web, in its own worker.',
});
