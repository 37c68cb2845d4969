// obstacles_depth and the cameras end to end: the real platform-server, the real gRPC clients.
import test from 'ava';
import { status, type ServiceError } from '@grpc/grpc-js';
import { CameraServiceClient } from '../../gen/platform/component/camera/v1/camera.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { VisionServiceClient } from '../../gen/platform/service/vision/v1/vision.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { RobotClient } from '../../cloud/client/robot-client.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { decodeDepthPng } from '../../drivers/camera/depth/depth-png.js';
import { readPcd } from '../../plugins/formats/pcd/pcd-reader.js';
import { countValid } from '../../drivers/camera/pointcloud/point-cloud.js';
import { pcdDataPath } from '../../drivers/testing/pcd-data.js';

const MUG = pcdDataPath('table_scene_mug_stereo_textured.pcd');
const MILK = pcdDataPath('milk_cartoon_all_small_clorox.pcd');

const config = {
  components: [
    // Camera 1 m up, pitched down 20 degrees; two boxes (the defaults) at x -450 / +400 mm.
    { name: 'cam', api: 'core:component:camera', model: 'fake', attributes: { seed: 3 } },
    { name: 'kinect', api: 'core:component:camera', model: 'pcd_file', attributes: { path: MUG } },
    // Its own camera and service for the test that moves boxes: AVA runs a file's tests concurrently.
    { name: 'cam2', api: 'core:component:camera', model: 'fake', attributes: { seed: 4 } },
    { name: 'milk-cam', api: 'core:component:camera', model: 'pcd_file', attributes: { path: MILK } },
  ],
  services: [
    { name: 'obstacles', api: 'core:service:vision', model: 'obstacles_depth', attributes: { camera_name: 'cam' } },
    { name: 'moving', api: 'core:service:vision', model: 'obstacles_depth', attributes: { camera_name: 'cam2' } },
    // Defaults on the milk scene: no ground (its table is steeper than 30 deg), one object of ~241k coloured points.
    { name: 'milk', api: 'core:service:vision', model: 'obstacles_depth', attributes: { camera_name: 'milk-cam' } },
    {
      name: 'mug',
      api: 'core:service:vision',
      model: 'obstacles_depth',
      attributes: { camera_name: 'kinect', ground_angle_tolerance_degs: 50, max_dist_from_plane_mm: 20, min_points_in_segment: 300 },
    },
  ],
};

let runtime: SpawnedRuntime;
let cameras: CameraServiceClient;
let vision: VisionServiceClient;
test.before(async () => {
  runtime = await spawnRuntime(config);
  // A 640x480 cloud with colour is ~4.9 MB of PCD, over grpc-js's default 4 MB receive limit.
  cameras = new CameraServiceClient(runtime.address, insecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  vision = new VisionServiceClient(runtime.address, insecure());
});
test.after.always(() => runtime?.stop());

interface Obj {
  pointCloud: Buffer;
  geometries: {
    referenceFrame: string;
    geometries: { center: { x: number; y: number; z: number }; box: { dimsMm: { x: number; y: number; z: number } }; label: string }[];
  };
}

test('GetObjectPointClouds on the fake camera: one object per box, PCD in metres, box in mm in the camera frame', async (t) => {
  const response = await call(vision, 'getObjectPointClouds', { name: 'obstacles', cameraName: 'cam' });
  t.is(response.mimeType, 'pointcloud/pcd');
  const objects = response.objects as Obj[];
  t.is(objects.length, 2);
  const xs = objects.map((o) => o.geometries.geometries[0].center.x).sort((a, b) => a - b);
  t.true(Math.abs(xs[0] + 450) < 120 && Math.abs(xs[1] - 400) < 120, `centres x ${xs}`);
  for (const o of objects) {
    t.is(o.geometries.referenceFrame, 'cam');
    const g = o.geometries.geometries[0];
    t.is(g.label, 'cam');
    const cloud = readPcd(o.pointCloud); // the reader turns metres into mm
    t.is(cloud.height, 1);
    const p = cloud.positions;
    for (const [axis, key] of [
      [0, 'x'],
      [1, 'y'],
      [2, 'z'],
    ] as const) {
      let lo = Infinity,
        hi = -Infinity;
      for (let i = axis; i < p.length; i += 3) {
        lo = Math.min(lo, p[i]);
        hi = Math.max(hi, p[i]);
      }
      t.true(Math.abs(g.center[key] - (lo + hi) / 2) < 1, `${key} centre`);
      t.true(Math.abs(g.box.dimsMm[key] - (hi - lo)) < 1, `${key} dims`);
    }
    // In the file the coordinates are metres: z of a box 2-3 m away reads 2.x, not 2000.
    const text = o.pointCloud.subarray(0, 200).toString('latin1');
    t.regex(text, /FIELDS x y z/);
    t.true(g.center.z > 1500 && g.center.z < 3200);
  }
  // An empty camera_name means the configured camera.
  t.is((await call(vision, 'getObjectPointClouds', { name: 'obstacles', cameraName: '' })).objects.length, 2);
});

test('GetObjectPointClouds on the replayed mug cloud finds the mug', async (t) => {
  const objects = (await call(vision, 'getObjectPointClouds', { name: 'mug', cameraName: 'kinect' })).objects as Obj[];
  t.is(objects.length, 1);
  const c = objects[0].geometries.geometries[0].center;
  t.true(Math.abs(c.x - 73) < 30 && Math.abs(c.y - 62) < 30 && Math.abs(c.z - 758) < 30, JSON.stringify(c));
  t.true(readPcd(objects[0].pointCloud).width > 10_000);
});

test('vision DoCommand reports the effective attributes and the last frame', async (t) => {
  const attrs = (await call(vision, 'doCommand', { name: 'obstacles', command: { attributes: true } })).result;
  t.is(attrs.clustering_radius, 1);
  t.is(attrs.clustering_strictness, 5);
  await call(vision, 'getObjectPointClouds', { name: 'obstacles', cameraName: 'cam' });
  const last = (await call(vision, 'doCommand', { name: 'obstacles', command: { last_frame: true } })).result.last_frame;
  t.is(last.points, 640 * 480);
  t.is(last.objects, 2);
  t.true(Math.abs(last.ground.tilt_degs - 20) < 1);
});

test('camera API on the fake camera: intrinsics, 16-bit depth PNG, colour PNG, PCD in metres, DoCommand', async (t) => {
  const props = await call(cameras, 'getProperties', { name: 'cam' });
  t.true(props.supportsPcd);
  t.is(props.intrinsicParameters.width, 640);
  t.is(props.intrinsicParameters.height, 480);
  t.true(Math.abs(props.intrinsicParameters.fx - 320 / Math.tan(Math.PI / 6)) < 1e-6);
  t.is(props.intrinsicParameters.ppx, 319.5);
  const depth = await call(cameras, 'getImage', { name: 'cam', mimeType: '' });
  t.is(depth.mimeType, 'image/vnd.platform.depth+png');
  const map = decodeDepthPng(depth.image);
  t.is(map.width, 640);
  t.true(map.depth.some((d) => d > 1000 && d < 6000));
  const colour = await call(cameras, 'getImage', { name: 'cam', mimeType: 'image/png' });
  t.is(colour.mimeType, 'image/png');
  t.is(colour.width, 640);
  const pcd = await call(cameras, 'getPointCloud', { name: 'cam', mimeType: '' });
  t.is(pcd.mimeType, 'pointcloud/pcd');
  const cloud = readPcd(pcd.pointCloud);
  t.is(cloud.width * cloud.height, 640 * 480);
  t.regex(pcd.pointCloud.subarray(0, 300).toString('latin1'), /DATA binary\n/);
});

test("the fake camera's boxes can be moved at runtime, and the segmenter sees the new world", async (t) => {
  t.is((await call(vision, 'getObjectPointClouds', { name: 'moving', cameraName: 'cam2' })).objects.length, 2);
  const three = [-700, 0, 700].map((x) => ({ x_mm: x, z_mm: 2400, width_mm: 300, height_mm: 350, depth_mm: 300 }));
  t.deepEqual((await call(cameras, 'doCommand', { name: 'cam2', command: { set_boxes: three } })).result, { boxes: 3 });
  const objects = (await call(vision, 'getObjectPointClouds', { name: 'moving', cameraName: 'cam2' })).objects as Obj[];
  t.deepEqual(
    objects.map((o) => Math.round(o.geometries.geometries[0].center.x / 100) * 100).sort((a, b) => a - b),
    [-700, 0, 700],
  );
  t.is((await call(cameras, 'doCommand', { name: 'cam2', command: { get_scene: true } })).result.boxes.length, 3);
});

test('camera API on the pcd_file camera: the replayed cloud, fitted intrinsics, depth and colour images', async (t) => {
  const cloud = readPcd((await call(cameras, 'getPointCloud', { name: 'kinect', mimeType: 'pointcloud/pcd' })).pointCloud);
  t.is(cloud.width, 640);
  t.is(cloud.height, 480);
  t.is(countValid(cloud), 209_280);
  const props = await call(cameras, 'getProperties', { name: 'kinect' });
  t.true(props.supportsPcd);
  // Recovered from the organized grid (this stereo cloud's focal length is ~964 px).
  t.true(Math.abs(props.intrinsicParameters.fx - 964.36) < 0.5, `fx ${props.intrinsicParameters.fx}`);
  t.true(Math.abs(props.intrinsicParameters.ppy - 223.36) < 0.5, `ppy ${props.intrinsicParameters.ppy}`);
  t.deepEqual(props.mimeTypes, ['image/vnd.platform.depth+png', 'image/png']);
  const depth = decodeDepthPng((await call(cameras, 'getImage', { name: 'kinect', mimeType: '' })).image);
  t.is(depth.depth.filter((d) => d > 0).length, 209_280);
  t.is((await call(cameras, 'getImage', { name: 'kinect', mimeType: 'image/png' })).height, 480);
});

test('bad requests get INVALID_ARGUMENT naming the field and rule', async (t) => {
  const wrongCamera = (await t.throwsAsync(call(vision, 'getObjectPointClouds', { name: 'obstacles', cameraName: 'kinect' }))) as ServiceError;
  t.is(wrongCamera.code, status.INVALID_ARGUMENT);
  t.regex(wrongCamera.details, /camera_name "kinect": this obstacles_depth service segments camera "cam"/);
  const mime = (await t.throwsAsync(call(cameras, 'getImage', { name: 'cam', mimeType: 'image/gif' }))) as ServiceError;
  t.is(mime.code, status.INVALID_ARGUMENT);
  t.regex(mime.details, /mime_type "image\/gif": must be/);
  const pcdMime = (await t.throwsAsync(call(cameras, 'getPointCloud', { name: 'cam', mimeType: 'text/plain' }))) as ServiceError;
  t.is(pcdMime.code, status.INVALID_ARGUMENT);
  const command = (await t.throwsAsync(call(cameras, 'doCommand', { name: 'cam', command: { set_boxes: [{ x_mm: 0 }] } }))) as ServiceError;
  t.regex(command.details, /set_boxes\[0\]\.z_mm undefined: must be a number/);
  const missing = (await t.throwsAsync(call(vision, 'getObjectPointClouds', { name: 'nope', cameraName: '' }))) as ServiceError;
  t.is(missing.code, status.NOT_FOUND);
});

test('config errors name the attribute: a vision service without camera_name and a missing PCD file', async (t) => {
  const bad = await spawnRuntime({
    components: [{ name: 'gone', api: 'core:component:camera', model: 'pcd_file', attributes: { path: '/nonexistent/x.pcd' } }],
    services: [{ name: 'v', api: 'core:service:vision', model: 'obstacles_depth', attributes: { clustering_radius: 2 } }],
  });
  t.teardown(() => bad.stop());
  const robot = new RobotServiceClient(bad.address, insecure());
  const statusOf = async (name: string) => {
    for (let i = 0; i < 600; i++) {
      const s = (await call(robot, 'getMachineStatus', {})).resources.find((r: { name: { name: string } }) => r.name.name === name);
      if (s && s.error) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  };
  const gone = await statusOf('gone');
  t.regex(gone?.error ?? bad.output(), /path "\/nonexistent\/x\.pcd": cannot be read/);
  const v = await statusOf('v');
  t.regex(v?.error ?? bad.output(), /camera_name: is required/);
  t.not(gone?.state, ResourceState.RESOURCE_STATE_READY);
});

test('object clouds travel as binary_compressed PCD: a whole-scene object fits the default 4 MB limit of standard clients', async (t) => {
  // A client with grpc-js defaults (4 MB receive limit), as grpcurl and other standard clients have.
  const plain = new VisionServiceClient(runtime.address, insecure());
  const objects = (await call(plain, 'getObjectPointClouds', { name: 'milk', cameraName: '' })).objects as Obj[];
  t.is(objects.length, 1);
  const pcd = objects[0].pointCloud;
  t.regex(pcd.subarray(0, 300).toString('latin1'), /DATA binary_compressed\n/);
  const cloud = readPcd(pcd);
  t.true(cloud.width > 240_000);
  // Uncompressed it would be 16 bytes a point (x y z rgb); compressed it is well under that.
  t.true(pcd.length < cloud.width * 16 * 0.8, `${pcd.length} bytes for ${cloud.width} points`);
  plain.close();
});

test("the project's own client accepts messages over 4 MB (a 640x480 coloured cloud is ~4.9 MB)", async (t) => {
  const robot = await RobotClient.connect({ address: runtime.address, session: false });
  t.teardown(() => robot.close());
  const camerasOfClient = robot.service(CameraServiceClient);
  const response = await call(camerasOfClient, 'getPointCloud', { name: 'kinect', mimeType: '' });
  t.true(response.pointCloud.length > 4 * 1024 * 1024, `${response.pointCloud.length} bytes`);
  t.is(readPcd(response.pointCloud).width, 640);
});
