import { MLMODEL_API, type TensorDataType, type Tensors } from '../../../plugins/apis/mlmodel.js';
import * as pb from '../../../gen/platform/service/mlmodel/v1/mlmodel.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const mlmodel = (access: ResourceAccess, name: string | undefined) => access.resource(requireName(name), MLMODEL_API);
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const mlmodelAdapter: ApiAdapter = {
  serviceName: 'platform.service.mlmodel.v1.MLModelService',
  definition: pb.MLModelServiceService,
  implementation: (access): pb.MLModelServiceServer => ({
    // The tensors' bytes go to the model's worker as they are; the worker checks types and shapes.
    infer: unary<pb.InferRequest, pb.InferResponse>(async (r) => {
      const inputs: Tensors = {};
      for (const [key, t] of Object.entries(r.inputTensors ?? {})) {
        inputs[key] = { dataType: t.dataType as TensorDataType, shape: t.shape.map(Number), data: t.data };
      }
      const outputs = await mlmodel(access, r.name).infer(inputs);
      const outputTensors: Record<string, pb.Tensor> = {};
      for (const [key, t] of Object.entries(outputs)) outputTensors[key] = { dataType: t.dataType, shape: t.shape, data: asBuffer(t.data) };
      return { outputTensors };
    }),
    metadata: unary<pb.MetadataRequest, pb.MetadataResponse>(async (r) => {
      const m = await mlmodel(access, r.name).metadata();
      const labelType = { tensor_value: pb.LabelType.LABEL_TYPE_TENSOR_VALUE, tensor_axis: pb.LabelType.LABEL_TYPE_TENSOR_AXIS };
      const infos = (list: typeof m.inputInfo) =>
        list.map((i) => ({
          name: i.name,
          description: i.description,
          dataType: i.dataType,
          shape: i.shape,
          associatedFiles: i.associatedFiles.map((f) => ({ name: f.name, description: f.description, labelType: labelType[f.labelType] })),
        }));
      return { metadata: { name: m.name, type: m.type, description: m.description, inputInfo: infos(m.inputInfo), outputInfo: infos(m.outputInfo) } };
    }),
    doCommand: doCommand(access, MLMODEL_API),
  }),
};
