// The built-in capture methods of each api, read from the APIs' own declarations (plugins/apis/): which
// driver method the data manager calls at a capture tick and how it turns the result into what is stored
// (a tabular payload or a binary datum). Models add their own through the plugin contract
// (plugins/capture.ts). No runtime imports beyond the declarations: this table is used on the main thread
// (to validate configs) and in the data manager's worker.
import { BUILT_IN_APIS } from '../../plugins/apis/index.js';
import { OBJECTS_MIME } from '../../plugins/apis/vision.js';
import type { ApiCaptureMethod } from '../../plugins/capture.js';

export type { Captured, CaptureCall } from '../../plugins/capture.js';

export const builtinCaptureMethods: Readonly<Record<string, Readonly<Record<string, ApiCaptureMethod>>>> = Object.fromEntries(
  BUILT_IN_APIS.filter((declaration) => declaration.capture).map((declaration) => [declaration.api, declaration.capture!]),
);

/** The file extension a binary datum is uploaded with; it decides the MIME type the cloud records. */
export function extensionForMime(mimeType: string): string {
  if (mimeType === 'image/jpeg') return '.jpg';
  if (mimeType === 'image/png' || mimeType.endsWith('+png')) return '.png';
  if (mimeType === 'pointcloud/pcd') return '.pcd';
  if (mimeType === OBJECTS_MIME) return '.objects';
  return '.bin';
}
