// The built-in models. Each is registered by (api, model) through the same contract modules use.
import type { ModelDefinition } from '../plugins/contract.js';
import { fakeBoardModel } from './board/fake/model.js';
import { gpioMotorModel } from './motor/gpio/model.js';
import { incrementalEncoderModel } from './encoder/incremental/model.js';
import { singleEncoderModel } from './encoder/single/model.js';
import { fakeEncoderModel } from './encoder/fake/model.js';
import { piBoardModel } from './board/pi/model.js';
import { esp32BoardModel } from './board/esp32/model.js';
import { fakeSensorModel } from './sensor/fake/model.js';
import { fakeCameraModel } from './camera/fake/model.js';
import { pcdFileCameraModel } from './camera/pcd-file/model.js';
import { imageFileCameraModel } from './camera/image-file/model.js';
import { obstaclesDepthModel } from './vision/obstacles-depth/model.js';
import { onnxCpuModel } from './mlmodel/onnx-cpu/model.js';
import { mlmodelVisionModel } from './vision/mlmodel/model.js';

export const builtinModels: readonly ModelDefinition[] = [
  fakeBoardModel,
  gpioMotorModel,
  incrementalEncoderModel,
  singleEncoderModel,
  fakeEncoderModel,
  piBoardModel,
  esp32BoardModel,
  fakeSensorModel,
  fakeCameraModel,
  pcdFileCameraModel,
  imageFileCameraModel,
  obstaclesDepthModel,
  onnxCpuModel,
  mlmodelVisionModel,
];
