// Conversions between the platform's tensors (typed bytes) and onnxruntime's, checked against the rules
// a caller can break: an unknown type, a shape that does not match the bytes.
import type * as ort from 'onnxruntime-web';
import { invalidArgument } from '../../../plugins/errors.js';
import { tensorDataTypes, tensorElementBytes, type Tensor, type TensorDataType } from '../../../plugins/apis/mlmodel.js';

type OrtData = Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | BigInt64Array;

const arrays: Record<TensorDataType, new (buffer: ArrayBuffer, offset: number, length: number) => OrtData> = {
  float32: Float32Array,
  float64: Float64Array,
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  bool: Uint8Array,
};

/** The platform tensor as onnxruntime's (type, data, dims), without copying when the bytes are aligned. */
export function toOrt(name: string, tensor: Tensor, Tensor: typeof ort.Tensor): ort.Tensor {
  if (!tensorDataTypes.includes(tensor.dataType)) {
    throw invalidArgument(`input_tensors.${name}.data_type ${JSON.stringify(tensor.dataType)}: must be one of ${tensorDataTypes.join(', ')}`);
  }
  if (!tensor.shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw invalidArgument(`input_tensors.${name}.shape [${tensor.shape}]: dimensions must be non-negative integers`);
  }
  const size = tensor.shape.reduce((a, b) => a * b, 1);
  const width = tensorElementBytes[tensor.dataType];
  if (tensor.data.byteLength !== size * width) {
    throw invalidArgument(
      `input_tensors.${name}: shape [${tensor.shape}] of ${tensor.dataType} needs ${size * width} bytes of data, got ${tensor.data.byteLength}`,
    );
  }
  const bytes = tensor.data.byteOffset % width === 0 ? tensor.data : tensor.data.slice();
  const data = new arrays[tensor.dataType](bytes.buffer as ArrayBuffer, bytes.byteOffset, size);
  return new Tensor(tensor.dataType, data as Float32Array, tensor.shape);
}

/** onnxruntime's tensor as the platform's; other element types (strings) are refused by name. */
export function fromOrt(name: string, tensor: ort.Tensor): Tensor {
  const type = tensor.type as TensorDataType;
  if (!tensorDataTypes.includes(type)) throw invalidArgument(`output ${name} has type ${tensor.type}, which MLModelService cannot carry`);
  const data = tensor.data as OrtData;
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  // The bytes are transferred to the caller's thread: only a buffer this tensor owns whole may go (never
  // a view into the WASM heap or a buffer shared with another output).
  const owned = data.buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.buffer.byteLength === data.byteLength;
  return { dataType: type, shape: tensor.dims.map(Number), data: owned ? view : view.slice() };
}
