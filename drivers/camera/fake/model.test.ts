import test from 'ava';
import { validateAttributes } from '../../../plugins/contract.js';
import { DEFAULT_BOXES, fakeCameraModel } from './model.js';

const validate = (raw: unknown) => validateAttributes(fakeCameraModel, raw, 'components[0].attributes').attributes;

test('defaults: a 640x480, 60 degree camera 1 m up, pitched 20 degrees, two boxes, 1 mm noise', (t) => {
  t.deepEqual(validate({}), {
    width_px: 640,
    height_px: 480,
    horizontal_fov_degs: 60,
    camera_height_mm: 1000,
    tilt_degs: 20,
    roll_degs: 0,
    boxes: DEFAULT_BOXES,
    noise_mm: 1,
    dropout: 0,
    max_depth_mm: 6000,
    seed: 1,
  });
  t.is(validate({ boxes: [{ x_mm: 0, z_mm: 1, width_mm: 1, height_mm: 1, depth_mm: 1 }] }).boxes[0].yaw_degs, 0);
});

const bad: [unknown, RegExp][] = [
  [{ width_px: 8 }, /components\[0\]\.attributes\.width_px 8: must be at least 16/],
  [{ horizontal_fov_degs: 180 }, /horizontal_fov_degs 180: must be less than 170/],
  [{ tilt_degs: 90 }, /tilt_degs 90: must be at most 89/],
  [{ camera_height_mm: 0 }, /camera_height_mm 0: must be greater than 0/],
  [{ dropout: 2 }, /dropout 2: must be at most 1/],
  [{ max_depth_mm: 70000 }, /max_depth_mm 70000: must be at most 65535/],
  [{ boxes: [{ x_mm: 0, z_mm: 1, width_mm: -1, height_mm: 1, depth_mm: 1 }] }, /boxes\[0\]\.width_mm -1: must be greater than 0/],
  [{ boxes: [{ x_mm: 0, width_mm: 1, height_mm: 1, depth_mm: 1 }] }, /boxes\[0\]\.z_mm: must be a number/],
  [{ colour: 'red' }, /unknown field\(s\) colour/],
];
for (const [raw, message] of bad)
  test(`rejects ${JSON.stringify(raw)}`, (t) => {
    t.throws(() => validate(raw), { message });
  });
