// The built-in capture methods of each api: which driver method the data manager calls at a capture tick
// and how it turns the result into what is stored (a tabular payload or a binary datum). Models add
// their own through the plugin contract (plugins/capture.ts). No runtime imports beyond the api names:
// this table is used on the main thread (to validate configs) and in the data manager's worker.
import { BOARD_API, type AnalogValue } from '../../plugins/apis/board.js';
import { CAMERA_API, type CameraImage } from '../../plugins/apis/camera.js';
import { ENCODER_API, type EncoderPosition } from '../../plugins/apis/encoder.js';
import { MOTOR_API, type PowerState } from '../../plugins/apis/motor.js';
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import { VISION_API } from '../../plugins/apis/vision.js';
import type { CaptureKind, CapturedBinary } from '../../plugins/capture.js';

/** What one capture produced. */
export type Captured = { kind: 'tabular'; data: Record<string, unknown> } | { kind: 'binary'; binary: CapturedBinary };

/** A driver call of a capture: made in the captured resource's own worker (core/workers/port-sampler.ts). */
export interface CaptureCall {
  method: string;
  args: unknown[];
}

export interface BuiltinCaptureMethod {
  kind: CaptureKind;
  /** Checks additional_params on the main thread; returns the rule that is broken, if any. */
  checkParams?(params: Record<string, unknown>): string | undefined;
  /** The driver calls one capture makes, in order. */
  calls(params: Record<string, unknown>): CaptureCall[];
  /** Turns the calls' results (in the same order) into what is stored. */
  shape(values: unknown[], params: Record<string, unknown>): Captured;
}

/** Names from additional_params values (Analogs: reader names, Gpios: pins), in key order. */
function namesIn(params: Record<string, unknown>): string[] {
  return Object.keys(params)
    .sort()
    .map((k) => params[k] as string);
}

function checkNames(what: string) {
  return (params: Record<string, unknown>): string | undefined => {
    const values = Object.values(params);
    if (values.length === 0) return `must name at least one ${what}, e.g. {"${what}_1": "..."}`;
    if (values.some((v) => typeof v !== 'string' || v === '')) return `every value must be a ${what} name (a non-empty string)`;
    return undefined;
  };
}

const tabular = (data: Record<string, unknown>): Captured => ({ kind: 'tabular', data });
const call = (method: string, ...args: unknown[]): CaptureCall[] => [{ method, args }];

export const builtinCaptureMethods: Readonly<Record<string, Readonly<Record<string, BuiltinCaptureMethod>>>> = {
  [SENSOR_API]: {
    // The cloud's sensor data must carry the key "readings".
    Readings: { kind: 'tabular', calls: (p) => call('getReadings', p), shape: ([readings]) => tabular({ readings: readings as Record<string, unknown> }) },
  },
  [MOTOR_API]: {
    Position: { kind: 'tabular', calls: () => call('getPosition'), shape: ([position]) => tabular({ position }) },
    IsPowered: {
      kind: 'tabular',
      calls: () => call('isPowered'),
      shape: ([value]) => {
        const state = value as PowerState;
        return tabular({ is_on: state.isOn, power_pct: state.powerPct });
      },
    },
  },
  [ENCODER_API]: {
    Position: {
      kind: 'tabular',
      calls: () => call('getPosition'),
      shape: ([value]) => {
        const position = value as EncoderPosition;
        return tabular({ value: position.value, position_type: position.type });
      },
    },
  },
  [BOARD_API]: {
    Analogs: {
      kind: 'tabular',
      checkParams: checkNames('reader'),
      calls: (p) => namesIn(p).map((reader) => ({ method: 'readAnalogReader', args: [reader] })),
      shape: (values, p) => {
        const analogs: Record<string, unknown> = {};
        namesIn(p).forEach((reader, i) => {
          const v = values[i] as AnalogValue;
          analogs[reader] = { value: v.value, min_range: v.minRange, max_range: v.maxRange, step_size: v.stepSize };
        });
        return tabular({ analogs });
      },
    },
    Gpios: {
      kind: 'tabular',
      checkParams: checkNames('pin'),
      calls: (p) => namesIn(p).map((pin) => ({ method: 'getGPIO', args: [pin] })),
      shape: (values, p) => {
        const gpios: Record<string, boolean> = {};
        namesIn(p).forEach((pin, i) => (gpios[pin] = values[i] as boolean));
        return tabular({ gpios });
      },
    },
  },
  [CAMERA_API]: {
    GetImage: {
      kind: 'binary',
      checkParams: (p) => (p.mime_type !== undefined && typeof p.mime_type !== 'string' ? 'mime_type must be a string' : undefined),
      calls: (p) => call('getImage', typeof p.mime_type === 'string' ? p.mime_type : ''),
      shape: ([value]) => {
        const image = value as CameraImage;
        return { kind: 'binary', binary: { data: image.data, mimeType: image.mimeType } };
      },
    },
    GetPointCloud: {
      kind: 'binary',
      calls: () => call('getPointCloudPcd'),
      shape: ([pcd]) => ({ kind: 'binary', binary: { data: pcd as Uint8Array, mimeType: 'pointcloud/pcd' } }),
    },
  },
  [VISION_API]: {
    GetObjectPointClouds: {
      kind: 'binary',
      checkParams: (p) => (p.camera_name !== undefined && typeof p.camera_name !== 'string' ? 'camera_name must be a string' : undefined),
      calls: (p) => call('getObjectPointClouds', typeof p.camera_name === 'string' ? p.camera_name : ''),
      shape: ([objects]) => ({ kind: 'binary', binary: { data: encodeObjects(objects as unknown[]), mimeType: OBJECTS_MIME } }),
    },
  },
};

/** Vision objects are stored as the GetObjectPointClouds answer, in the length-prefixed form of capture-file.ts. */
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

/** The file extension a binary datum is uploaded with; it decides the MIME type the cloud records. */
export function extensionForMime(mimeType: string): string {
  if (mimeType === 'image/jpeg') return '.jpg';
  if (mimeType === 'image/png' || mimeType.endsWith('+png')) return '.png';
  if (mimeType === 'pointcloud/pcd') return '.pcd';
  if (mimeType === OBJECTS_MIME) return '.objects';
  return '.bin';
}
