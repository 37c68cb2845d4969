import test from 'ava';
import { ConfigError } from '../../../plugins/validation.js';
import { parseObstaclesDepthAttributes } from './attributes.js';

test('all six attributes default to SPEC values; camera_name is kept', (t) => {
  t.deepEqual(parseObstaclesDepthAttributes({ camera_name: 'cam' }), {
    camera_name: 'cam',
    min_points_in_plane: 500,
    min_points_in_segment: 10,
    max_dist_from_plane_mm: 100,
    ground_angle_tolerance_degs: 30,
    clustering_radius: 1,
    clustering_strictness: 5,
  });
});

test('explicit values are kept; max_dist_from_plane_mm may be fractional', (t) => {
  const attrs = parseObstaclesDepthAttributes({
    camera_name: 'cam',
    min_points_in_plane: 0,
    min_points_in_segment: 1,
    max_dist_from_plane_mm: 12.5,
    ground_angle_tolerance_degs: 90,
    clustering_radius: 16,
    clustering_strictness: 99,
  });
  t.is(attrs.max_dist_from_plane_mm, 12.5);
  t.is(attrs.clustering_radius, 16);
});

const bad: [Record<string, unknown>, string][] = [
  [{}, 'attributes.camera_name: is required and must be a string'],
  [{ camera_name: '' }, 'attributes.camera_name "": must not be empty'],
  [{ camera_name: 'c', min_points_in_plane: -1 }, 'attributes.min_points_in_plane -1: must be at least 0'],
  [{ camera_name: 'c', min_points_in_plane: 2.5 }, 'attributes.min_points_in_plane 2.5: must be an integer'],
  [{ camera_name: 'c', min_points_in_segment: 0 }, 'attributes.min_points_in_segment 0: must be at least 1'],
  [{ camera_name: 'c', max_dist_from_plane_mm: 0 }, 'attributes.max_dist_from_plane_mm 0: must be greater than 0'],
  [{ camera_name: 'c', max_dist_from_plane_mm: 'far' }, 'attributes.max_dist_from_plane_mm "far": must be a number'],
  [{ camera_name: 'c', ground_angle_tolerance_degs: 91 }, 'attributes.ground_angle_tolerance_degs 91: must be at most 90'],
  [{ camera_name: 'c', ground_angle_tolerance_degs: 30.5 }, 'attributes.ground_angle_tolerance_degs 30.5: must be an integer'],
  [{ camera_name: 'c', clustering_radius: 0 }, 'attributes.clustering_radius 0: must be at least 1'],
  [{ camera_name: 'c', clustering_radius: 17 }, 'attributes.clustering_radius 17: must be at most 16'],
  [{ camera_name: 'c', clustering_strictness: 0 }, 'attributes.clustering_strictness 0: must be at least 1'],
  [{ camera_name: 'c', clustering_strictness: 100 }, 'attributes.clustering_strictness 100: must be at most 99'],
  [{ camera_name: 'c', clustering_radious: 2 }, 'attributes: unknown field(s) clustering_radious'],
];
for (const [raw, message] of bad) {
  test(`rejects ${JSON.stringify(raw)}`, (t) => {
    t.throws(() => parseObstaclesDepthAttributes(raw), { instanceOf: ConfigError, message });
  });
}

test("errors are reported under the caller's path", (t) => {
  t.throws(() => parseObstaclesDepthAttributes({ camera_name: 'c', clustering_radius: 0 }, 'services[2].attributes'), {
    message: 'services[2].attributes.clustering_radius 0: must be at least 1',
  });
});
