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

export interface Vision extends Resource {
  /** The objects in the named camera's current point cloud ('' = the configured camera). */
  getObjectPointClouds(cameraName: string, extra?: Record<string, unknown>): Promise<VisionObject[]> | VisionObject[];
}
