// The mlmodel vision service in its worker: decodes the image here, prepares the model input exactly as
// the trainer did (preprocess.ts), runs the model in the ML model service's worker, and reads the outputs
// as the trainer does (postprocess.ts).
import { CAMERA_API, COLOR_PNG } from '../../../plugins/apis/camera.js';
import { MLMODEL_API, type MLModel, type MLModelMetadata, type Tensor } from '../../../plugins/apis/mlmodel.js';
import type { Vision, VisionImage } from '../../../plugins/apis/vision.js';
import { defineDriver, type Dependencies, type Remote } from '../../../plugins/driver.js';
import { failedPrecondition, invalidArgument, unimplemented } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import { decodeRgb, JPEG_MIME, PNG_MIME, type RgbImage } from '../../camera/image-decode/rgb-image.js';
import type { MlmodelVisionAttributes } from './model.js';
import { classify, detect, type Thresholds } from './postprocess.js';
import { toInputTensor } from './preprocess.js';

/** What the service needs from the model, read from its metadata once. */
interface ModelShape {
  input: string;
  /** Fixed input size, or undefined for any (then the image's own size). */
  width?: number;
  height?: number;
  labels: string[];
  /** Model output names for each role the service uses. */
  outputs: Partial<Record<'probabilities' | 'boxes' | 'scores', string>>;
}

function shapeOf(meta: MLModelMetadata, a: MlmodelVisionAttributes): ModelShape {
  const inputName = (n: string) => a.remap_input_names[n] ?? n;
  const input = meta.inputInfo.find((i) => inputName(i.name) === 'image') ?? meta.inputInfo[0];
  if (!input) throw failedPrecondition(`mlmodel_name ${JSON.stringify(a.mlmodel_name)}: the model has no input`);
  const [, channels, height, width] = input.shape;
  if (input.shape.length !== 4 || (channels !== 3 && channels !== -1)) {
    throw failedPrecondition(
      `mlmodel_name ${JSON.stringify(a.mlmodel_name)}: input ${input.name} has shape [${input.shape}]; an image input must be [N, 3, height, width]`,
    );
  }
  const outputName = (n: string) => a.remap_output_names[n] ?? n;
  const outputs: ModelShape['outputs'] = {};
  for (const o of meta.outputInfo) {
    const role = outputName(o.name);
    if (role === 'probabilities' || role === 'boxes' || role === 'scores') outputs[role] = o.name;
  }
  if (!outputs.probabilities && !outputs.boxes && meta.outputInfo.length === 1) outputs.probabilities = meta.outputInfo[0].name;
  return { input: input.name, width: width > 0 ? width : undefined, height: height > 0 ? height : undefined, labels: meta.labels ?? [], outputs };
}

const floats = (t: Tensor | undefined, what: string): Float32Array => {
  if (!t || t.dataType !== 'float32') throw failedPrecondition(`the model's ${what} output must be float32, got ${t?.dataType ?? 'nothing'}`);
  return new Float32Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.byteLength) as ArrayBuffer);
};

async function modelOf(dependencies: Dependencies, name: string): Promise<{ model: Remote<MLModel>; meta: MLModelMetadata }> {
  const notAModel = () => failedPrecondition(`mlmodel_name ${JSON.stringify(name)}: must name an mlmodel service (core:service:mlmodel)`);
  let model: Remote<MLModel>;
  try {
    // The worker checks the dependency's API: a camera named here fails at once, with the field named.
    model = dependencies.get(MLMODEL_API, name);
  } catch {
    throw notAModel();
  }
  try {
    return { model, meta: await model.metadata() };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'UNIMPLEMENTED') throw notAModel();
    throw err;
  }
}

export default defineDriver<MlmodelVisionAttributes, Vision>(async ({ attributes, dependencies }) => {
  const { model, meta } = await modelOf(dependencies, attributes.mlmodel_name);
  const shape = shapeOf(meta, attributes);
  const norm = { mean: attributes.input_image_mean_value, std: attributes.input_image_std_dev };
  const thresholds = (fallback: number): Thresholds => ({ fallback: attributes.default_minimum_confidence ?? fallback, byLabel: attributes.label_confidences });

  function decoded(image: VisionImage): RgbImage {
    const rgb = decodeRgb(image.data, image.mimeType);
    if ((image.width && image.width !== rgb.width) || (image.height && image.height !== rgb.height)) {
      throw invalidArgument(`width/height ${image.width}x${image.height}: the image is ${rgb.width}x${rgb.height}`);
    }
    return rgb;
  }

  async function run(rgb: RgbImage) {
    const width = shape.width ?? rgb.width;
    const height = shape.height ?? rgb.height;
    const input = toInputTensor(rgb, width, height, norm);
    // The tensor is this call's own: it moves to the model's worker rather than being copied there.
    return model.infer(
      transfer({ [shape.input]: { dataType: 'float32', shape: [1, 3, height, width], data: new Uint8Array(input.buffer) } }, [input.buffer as ArrayBuffer]),
    );
  }

  async function classifications(rgb: RgbImage, n: number) {
    if (!shape.outputs.probabilities)
      throw unimplemented(
        `mlmodel_name ${JSON.stringify(attributes.mlmodel_name)}: the model has no probabilities output, so it does not classify (outputs: ${meta.outputInfo.map((o) => o.name).join(', ')}; see remap_output_names)`,
      );
    const out = await run(rgb);
    return classify(floats(out[shape.outputs.probabilities], 'probabilities'), shape.labels, n, thresholds(0));
  }

  async function detections(rgb: RgbImage) {
    const { boxes, scores } = shape.outputs;
    if (!boxes || !scores)
      throw unimplemented(
        `mlmodel_name ${JSON.stringify(attributes.mlmodel_name)}: the model has no boxes and scores outputs, so it does not detect (outputs: ${meta.outputInfo.map((o) => o.name).join(', ')}; see remap_output_names)`,
      );
    const out = await run(rgb);
    const s = out[scores];
    const labels = s?.shape.at(-1) ?? 0;
    return detect(floats(out[boxes], 'boxes'), floats(s, 'scores'), labels, shape.labels, rgb.width, rgb.height, thresholds(0.05));
  }

  async function fromCamera(requested: string): Promise<RgbImage> {
    const cameraName = requested || attributes.camera_name;
    if (!cameraName) throw invalidArgument('camera_name: is required (this service has no camera_name attribute)');
    if (!dependencies.names().includes(cameraName)) {
      throw invalidArgument(
        `camera_name ${JSON.stringify(cameraName)}: not a dependency of this service (its camera: ${JSON.stringify(attributes.camera_name ?? '')})`,
      );
    }
    const camera = dependencies.get(CAMERA_API, cameraName);
    const props = await camera.getProperties();
    const mime = props.mimeTypes.find((m) => m === PNG_MIME || m === JPEG_MIME) ?? COLOR_PNG;
    const image = await camera.getImage(mime, {});
    return decodeRgb(image.data, image.mimeType, `camera ${cameraName} image`);
  }

  return {
    getObjectPointClouds() {
      throw unimplemented('the mlmodel vision service finds no point-cloud objects; use GetDetections or GetClassifications');
    },
    getClassifications: (image, n) => classifications(decoded(image), n),
    getDetections: (image) => detections(decoded(image)),
    getClassificationsFromCamera: async (cameraName, n) => classifications(await fromCamera(cameraName), n),
    getDetectionsFromCamera: async (cameraName) => detections(await fromCamera(cameraName)),
    doCommand(command) {
      if (command.attributes === true) return { ...attributes };
      throw invalidArgument(`command: must contain attributes: true, got ${Object.keys(command).join(', ') || 'nothing'}`);
    },
  };
});
