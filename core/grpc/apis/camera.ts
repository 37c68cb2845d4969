import { CAMERA_API, PCD_MIME } from '../../../plugins/apis/camera.js';
import * as pb from '../../../gen/platform/component/camera/v1/camera.js';
import { invalidArgument } from '../../serving/status-error.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const camera = (access: ResourceAccess, name: string | undefined) => access.resource(requireName(name), CAMERA_API);
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const cameraAdapter: ApiAdapter = {
  serviceName: 'platform.component.camera.v1.CameraService',
  definition: pb.CameraServiceService,
  implementation: (access): pb.CameraServiceServer => ({
    getImage: unary<pb.GetImageRequest, pb.GetImageResponse>(async (r) => {
      const image = await camera(access, r.name).getImage(r.mimeType ?? '', r.extra ?? {});
      return { mimeType: image.mimeType, image: asBuffer(image.data), width: image.width, height: image.height };
    }),
    getPointCloud: unary<pb.GetPointCloudRequest, pb.GetPointCloudResponse>(async (r) => {
      if (r.mimeType && r.mimeType !== PCD_MIME) throw invalidArgument(`mime_type ${JSON.stringify(r.mimeType)}: must be ${PCD_MIME} or empty`);
      const pcd = await camera(access, r.name).getPointCloudPcd(r.extra ?? {});
      return { mimeType: PCD_MIME, pointCloud: asBuffer(pcd) };
    }),
    getProperties: unary<pb.GetPropertiesRequest, pb.GetPropertiesResponse>(async (r) => {
      const p = await camera(access, r.name).getProperties();
      return { supportsPcd: p.supportsPcd, intrinsicParameters: p.intrinsics, mimeTypes: p.mimeTypes };
    }),
    doCommand: doCommand(access, CAMERA_API),
  }),
};
