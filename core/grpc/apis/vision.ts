import { PCD_MIME } from '../../../plugins/apis/camera.js';
import { VISION_API, type Vision } from '../../../plugins/apis/vision.js';
import * as pb from '../../../gen/platform/service/vision/v1/vision.js';
import { requireName, type ApiAdapter } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

export const visionAdapter: ApiAdapter = {
  serviceName: 'platform.service.vision.v1.VisionService',
  definition: pb.VisionServiceService,
  implementation: (access): pb.VisionServiceServer => ({
    // The segmentation runs in the service's worker; this thread only awaits and packs the answer.
    getObjectPointClouds: unary<pb.GetObjectPointCloudsRequest, pb.GetObjectPointCloudsResponse>(async (r) => {
      const objects = await access.resource<Vision>(requireName(r.name), VISION_API).getObjectPointClouds(r.cameraName ?? '', r.extra ?? {});
      return {
        mimeType: PCD_MIME,
        objects: objects.map((o) => ({
          pointCloud: Buffer.from(o.pointCloud.buffer, o.pointCloud.byteOffset, o.pointCloud.byteLength),
          geometries: {
            referenceFrame: o.referenceFrame,
            geometries: [{
              center: { x: o.center[0], y: o.center[1], z: o.center[2], oX: 0, oY: 0, oZ: 1, theta: 0 },
              box: { dimsMm: { x: o.dims[0], y: o.dims[1], z: o.dims[2] } },
              label: o.label,
            }],
          },
        })),
      };
    }),
    doCommand: doCommand(access, VISION_API),
  }),
};
