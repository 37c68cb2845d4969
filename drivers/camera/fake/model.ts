// The `fake` camera: a depth camera that renders a synthetic scene (a floor seen from a pitched and rolled
// camera, boxes standing on it, depth noise and dropouts) with pinhole intrinsics. A simulated device for
// developing and testing segmentation without hardware, documented as such in the README.
import * as z from 'zod';
import { CAMERA_API } from '../../../plugins/apis/camera.js';
import { defineModel } from '../../../plugins/contract.js';

const positive = (what = 'must be greater than 0') => z.number('must be a number').positive(what);

export const fakeBoxAttributes = z.strictObject({
  /** Centre of the box's footprint: metres to the right (x) and ahead along the floor (z), in mm. */
  x_mm: z.number('must be a number'),
  z_mm: z.number('must be a number'),
  width_mm: positive(),
  height_mm: positive(),
  depth_mm: positive(),
  yaw_degs: z.number('must be a number').default(0),
});

export const DEFAULT_BOXES = [
  { x_mm: -450, z_mm: 2000, width_mm: 300, height_mm: 400, depth_mm: 300, yaw_degs: 20 },
  { x_mm: 400, z_mm: 2600, width_mm: 400, height_mm: 300, depth_mm: 300, yaw_degs: 0 },
];

export const fakeCameraAttributes = z.strictObject({
  width_px: z.number().int('must be an integer').min(16, 'must be at least 16').max(4096, 'must be at most 4096').default(640),
  height_px: z.number().int('must be an integer').min(16, 'must be at least 16').max(4096, 'must be at most 4096').default(480),
  horizontal_fov_degs: z.number('must be a number').gt(10, 'must be more than 10').lt(170, 'must be less than 170').default(60),
  camera_height_mm: positive().default(1000),
  /** Pitch down; the floor is seen this many degrees from the ideal ground normal. */
  tilt_degs: z.number('must be a number').min(-89, 'must be at least -89').max(89, 'must be at most 89').default(20),
  roll_degs: z.number('must be a number').min(-89, 'must be at least -89').max(89, 'must be at most 89').default(0),
  boxes: z.array(fakeBoxAttributes).max(250, 'must have at most 250 boxes').default(DEFAULT_BOXES),
  /** Depth noise standard deviation at 1 m; it grows with the square of the depth. */
  noise_mm: z.number('must be a number').min(0, 'must be at least 0').default(1),
  /** Fraction of pixels without a reading. */
  dropout: z.number('must be a number').min(0, 'must be at least 0').max(1, 'must be at most 1').default(0),
  max_depth_mm: z.number().int('must be an integer').min(1, 'must be at least 1').max(65535, 'must be at most 65535').default(6000),
  seed: z.number().int('must be an integer').default(1),
});

export type FakeCameraAttributes = z.output<typeof fakeCameraAttributes>;
export type FakeBoxAttributes = z.output<typeof fakeBoxAttributes>;

export const fakeCameraModel = defineModel({
  api: CAMERA_API,
  model: 'fake',
  attributes: fakeCameraAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A simulated depth camera rendering a floor with boxes, with noise and pinhole intrinsics.',
});
