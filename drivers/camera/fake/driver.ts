// The fake depth camera in its worker: renders its scene once, then every frame applies fresh noise.
import { COLOR_PNG, DEPTH_PNG, type Camera, type CameraImage } from '../../../plugins/apis/camera.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { transfer } from '../../../plugins/transfer.js';
import { encodeColorPng } from '../depth/color-png.js';
import { encodeDepthPng } from '../depth/depth-png.js';
import { intrinsicsFromFov } from '../depth/intrinsics.js';
import { depthToPointCloud, type DepthMap } from '../depth/projection.js';
import { writePcd } from '../../../plugins/formats/pcd/pcd-writer.js';
import { transferables } from '../pointcloud/point-cloud.js';
import type { FakeBoxAttributes, FakeCameraAttributes } from './model.js';
import { SeededRandom } from './random.js';
import { applySensorModel, HIT_BOX0, HIT_FLOOR, renderScene, type RenderedScene, type Scene } from './scene.js';

const FLOOR = 0xff8c8c8c;
const PALETTE = [0xffd9534f, 0xff5cb85c, 0xff428bca, 0xfff0ad4e, 0xff9b59b6, 0xff1abc9c];

function sceneOf(a: FakeCameraAttributes, boxes: FakeBoxAttributes[]): Scene {
  return {
    intrinsics: intrinsicsFromFov(a.width_px, a.height_px, a.horizontal_fov_degs),
    cameraHeightMm: a.camera_height_mm,
    tiltDegs: a.tilt_degs,
    rollDegs: a.roll_degs,
    boxes: boxes.map((b) => ({ x: b.x_mm, z: b.z_mm, width: b.width_mm, height: b.height_mm, depth: b.depth_mm, yawDegs: b.yaw_degs })),
    noiseMm: a.noise_mm,
    dropout: a.dropout,
    maxDepthMm: a.max_depth_mm,
    seed: a.seed,
  };
}

function parseBoxes(value: unknown): FakeBoxAttributes[] {
  if (!Array.isArray(value)) throw invalidArgument('set_boxes: must be an array of boxes');
  return value.map((raw, i) => {
    const b = (raw ?? {}) as Record<string, unknown>;
    const num = (key: string, positive: boolean) => {
      const v = b[key];
      if (typeof v !== 'number' || !Number.isFinite(v) || (positive && v <= 0)) {
        throw invalidArgument(`set_boxes[${i}].${key} ${JSON.stringify(v)}: must be a ${positive ? 'number greater than 0' : 'number'}`);
      }
      return v;
    };
    return {
      x_mm: num('x_mm', false),
      z_mm: num('z_mm', false),
      width_mm: num('width_mm', true),
      height_mm: num('height_mm', true),
      depth_mm: num('depth_mm', true),
      yaw_degs: b.yaw_degs === undefined ? 0 : num('yaw_degs', false),
    };
  });
}

export default defineDriver<FakeCameraAttributes, Camera>(({ attributes, logger }) => {
  let scene = sceneOf(attributes, attributes.boxes);
  let rendered: RenderedScene = renderScene({ ...scene, noiseMm: 0, dropout: 0 });
  const random = new SeededRandom(attributes.seed);
  let frames = 0;
  logger.debug('fake camera scene rendered', { boxes: scene.boxes.length });

  const frame = (): DepthMap => {
    frames++;
    return applySensorModel(rendered.trueDepth, scene.intrinsics.width, scene.intrinsics.height, scene, random);
  };
  const colors = (map: DepthMap): Uint32Array => {
    const out = new Uint32Array(map.depth.length);
    for (let i = 0; i < out.length; i++) {
      if (map.depth[i] === 0) continue;
      const label = rendered.labels[i];
      out[i] = label === HIT_FLOOR ? FLOOR : label >= HIT_BOX0 ? PALETTE[(label - HIT_BOX0) % PALETTE.length] : 0;
    }
    return out;
  };
  const cloud = () => {
    const map = frame();
    return { ...depthToPointCloud(map, scene.intrinsics), colors: colors(map) };
  };

  return {
    getImage(mimeType): CameraImage {
      const { width, height } = scene.intrinsics;
      const map = frame();
      if (mimeType === '' || mimeType === DEPTH_PNG) return { mimeType: DEPTH_PNG, data: encodeDepthPng(map), width, height };
      if (mimeType === COLOR_PNG) return { mimeType: COLOR_PNG, data: encodeColorPng(width, height, colors(map)), width, height };
      throw invalidArgument(`mime_type ${JSON.stringify(mimeType)}: must be ${DEPTH_PNG}, ${COLOR_PNG} or empty`);
    },
    getPointCloud() {
      const c = cloud();
      return transfer(c, transferables(c));
    },
    getPointCloudPcd() {
      const pcd = writePcd(cloud()); // a buffer of its own, so it can move
      return transfer(new Uint8Array(pcd.buffer, pcd.byteOffset, pcd.byteLength), [pcd.buffer as ArrayBuffer]);
    },
    getProperties() {
      return { supportsPcd: true, intrinsics: { ...scene.intrinsics }, mimeTypes: [DEPTH_PNG, COLOR_PNG] };
    },
    doCommand(command) {
      // `set_boxes` moves the world: the next frames show the new boxes.
      if (command.set_boxes !== undefined) {
        const boxes = parseBoxes(command.set_boxes);
        scene = sceneOf(attributes, boxes);
        rendered = renderScene({ ...scene, noiseMm: 0, dropout: 0 });
        return { boxes: boxes.length };
      }
      if (command.get_scene === true)
        return {
          frames,
          boxes: scene.boxes.map((b) => ({ ...b })),
          tilt_degs: scene.tiltDegs,
          roll_degs: scene.rollDegs ?? 0,
          camera_height_mm: scene.cameraHeightMm,
        };
      throw invalidArgument(`command: must contain set_boxes or get_scene, got ${Object.keys(command).join(', ') || 'nothing'}`);
    },
  };
});
