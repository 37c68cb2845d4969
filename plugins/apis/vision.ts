import type { Resource } from '../driver.js';
import { defineApi } from '../api.js';

export const VISION_API = defineApi<Vision>('core:service:vision');

/** One object found by a segmenter: its points and an axis-aligned box in the camera's frame. */
export interface VisionObject {
  /** The object's points as a PCD file, metres. */
  pointCloud: Uint8Array;
  /** The frame of the box: the camera's name. */
  referenceFrame: string;
  /** Box centre, millimetres. */
  center: [number, number, number];
  /** Box extents along x, y, z, millimetres. */
  dims: [number, number, number];
  label: string;
}

/** An encoded image handed to a classifier or detector. */
export interface VisionImage {
  /** 'image/png', 'image/jpeg' or '' (recognised from the bytes). */
  mimeType: string;
  data: Uint8Array;
  /** 0, or the size the caller says the image has (checked). */
  width: number;
  height: number;
}

export interface Classification {
  className: string;
  confidence: number;
}

/** A box in pixels of the image, x right and y down from its top-left corner. */
export interface Detection {
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
  confidence: number;
  className: string;
}

export interface Vision extends Resource {
  /** The objects in the named camera's current point cloud ('' = the configured camera). */
  getObjectPointClouds(cameraName: string, extra?: Record<string, unknown>): Promise<VisionObject[]> | VisionObject[];
  /** At most n (0: all) classifications of the image, most confident first. */
  getClassifications?(image: VisionImage, n: number, extra?: Record<string, unknown>): Promise<Classification[]> | Classification[];
  getDetections?(image: VisionImage, extra?: Record<string, unknown>): Promise<Detection[]> | Detection[];
  /** The same on the named camera's current colour image ('' = the configured camera). */
  getClassificationsFromCamera?(cameraName: string, n: number, extra?: Record<string, unknown>): Promise<Classification[]> | Classification[];
  getDetectionsFromCamera?(cameraName: string, extra?: Record<string, unknown>): Promise<Detection[]> | Detection[];
}
