import { defineApi } from '../api.js';
import type { Resource } from '../driver.js';

export const MLMODEL_API = defineApi<MLModel>('core:service:mlmodel');

/** The element types a tensor may have, named as in the MLModelService proto. */
export const tensorDataTypes = ['float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'int64', 'bool'] as const;
export type TensorDataType = (typeof tensorDataTypes)[number];

/** Bytes per element of each type. */
export const tensorElementBytes: Record<TensorDataType, number> = {
  float32: 4,
  float64: 8,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  int64: 8,
  bool: 1,
};

/**
 * A named input or output of a model. `data` holds the elements in row-major order, little-endian (the
 * byte order of every platform Node runs on), packed: a plain byte array so it crosses threads and gRPC
 * without conversion.
 */
export interface Tensor {
  dataType: TensorDataType;
  shape: number[];
  data: Uint8Array;
}

export type Tensors = Record<string, Tensor>;

export interface TensorInfo {
  name: string;
  description: string;
  dataType: string;
  /** -1 for a dimension of any size. */
  shape: number[];
  associatedFiles: { name: string; description: string; labelType: 'tensor_value' | 'tensor_axis' }[];
}

export interface MLModelMetadata {
  name: string;
  type: string;
  description: string;
  inputInfo: TensorInfo[];
  outputInfo: TensorInfo[];
  /** The labels of the label file, in order, when the model has one (not in the proto: for vision services). */
  labels?: string[];
}

export interface MLModel extends Resource {
  infer(inputs: Tensors): Promise<Tensors> | Tensors;
  metadata(): Promise<MLModelMetadata> | MLModelMetadata;
}
