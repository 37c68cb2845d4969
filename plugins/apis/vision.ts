import type { Resource } from '../driver.js';
import { defineApi } from '../api.js';
import { callOf } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

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

/** Vision objects are stored as the GetObjectPointClouds answer, in the length-prefixed form below. */
export const OBJECTS_MIME = 'application/vnd.platform.objects';

/**
 * Each object as a u32 little-endian length, a JSON head (label, frame, centre and dims in millimetres)
 * and the object's PCD (metres), so that the stored datum holds every object in one file.
 */
function encodeObjects(objects: unknown[]): Uint8Array {
  const parts: Buffer[] = [];
  for (const o of objects as { pointCloud: Uint8Array; referenceFrame: string; center: number[]; dims: number[]; label: string }[]) {
    const head = Buffer.from(
      JSON.stringify({ label: o.label, reference_frame: o.referenceFrame, center_mm: o.center, dims_mm: o.dims, pcd_bytes: o.pointCloud.byteLength }),
    );
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.byteLength);
    parts.push(len, head, Buffer.from(o.pointCloud.buffer, o.pointCloud.byteOffset, o.pointCloud.byteLength));
  }
  return Buffer.concat(parts);
}

export const VISION_DECLARATION: ApiDeclaration = {
  api: VISION_API,
  capture: {
    GetObjectPointClouds: {
      kind: 'binary',
      checkParams: (p) => (p.camera_name !== undefined && typeof p.camera_name !== 'string' ? 'camera_name must be a string' : undefined),
      calls: (p) => callOf('getObjectPointClouds', typeof p.camera_name === 'string' ? p.camera_name : ''),
      shape: ([objects]) => ({ kind: 'binary', binary: { data: encodeObjects(objects as unknown[]), mimeType: OBJECTS_MIME } }),
    },
  },
};
