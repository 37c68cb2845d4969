import { PCD_MIME } from '../../../plugins/apis/camera.js';
import { VISION_API, type Classification, type Detection } from '../../../plugins/apis/vision.js';
import * as pb from '../../../gen/platform/service/vision/v1/vision.js';
import { requireName, type ApiAdapter, type ResourceAccess } from '../api-adapter.js';
import { unary } from '../unary.js';
import { doCommand } from './do-command.js';

const vision = (access: ResourceAccess, name: string | undefined) => access.resource(requireName(name), VISION_API);
const image = (r: { image?: Uint8Array; mimeType?: string; width?: number; height?: number }) => ({
  data: r.image ?? new Uint8Array(0),
  mimeType: r.mimeType ?? '',
  width: r.width ?? 0,
  height: r.height ?? 0,
});
const classification = (c: Classification): pb.Classification => ({ className: c.className, confidence: c.confidence });
const detection = (d: Detection): pb.Detection => ({ ...d });

export const visionAdapter: ApiAdapter = {
  serviceName: 'platform.service.vision.v1.VisionService',
  definition: pb.VisionServiceService,
  implementation: (access): pb.VisionServiceServer => ({
    // The segmentation runs in the service's worker; this thread only awaits and packs the answer.
    getObjectPointClouds: unary<pb.GetObjectPointCloudsRequest, pb.GetObjectPointCloudsResponse>(async (r) => {
      const objects = await vision(access, r.name).getObjectPointClouds(r.cameraName ?? '', r.extra ?? {});
      return {
        mimeType: PCD_MIME,
        objects: objects.map((o) => ({
          pointCloud: Buffer.from(o.pointCloud.buffer, o.pointCloud.byteOffset, o.pointCloud.byteLength),
          geometries: {
            referenceFrame: o.referenceFrame,
            geometries: [
              {
                center: { x: o.center[0], y: o.center[1], z: o.center[2], oX: 0, oY: 0, oZ: 1, theta: 0 },
                box: { dimsMm: { x: o.dims[0], y: o.dims[1], z: o.dims[2] } },
                label: o.label,
              },
            ],
          },
        })),
      };
    }),
    // Decoding, the model and the post-processing run in the service's worker (and the model's).
    getClassifications: unary<pb.GetClassificationsRequest, pb.GetClassificationsResponse>(async (r) => {
      const found = await vision(access, r.name).getClassifications(image(r), r.n ?? 0, r.extra ?? {});
      return { classifications: found.map(classification) };
    }),
    getDetections: unary<pb.GetDetectionsRequest, pb.GetDetectionsResponse>(async (r) => {
      const found = await vision(access, r.name).getDetections(image(r), r.extra ?? {});
      return { detections: found.map(detection) };
    }),
    getClassificationsFromCamera: unary<pb.GetClassificationsFromCameraRequest, pb.GetClassificationsResponse>(async (r) => {
      const found = await vision(access, r.name).getClassificationsFromCamera(r.cameraName ?? '', r.n ?? 0, r.extra ?? {});
      return { classifications: found.map(classification) };
    }),
    getDetectionsFromCamera: unary<pb.GetDetectionsFromCameraRequest, pb.GetDetectionsResponse>(async (r) => {
      const found = await vision(access, r.name).getDetectionsFromCamera(r.cameraName ?? '', r.extra ?? {});
      return { detections: found.map(detection) };
    }),
    doCommand: doCommand(access, VISION_API),
  }),
};
