// Attributes of the obstacles_depth vision service (SPEC "Vision service model obstacles_depth").
import * as z from 'zod';
import { parseConfig } from '../../../plugins/validation.js';

export const MAX_CLUSTERING_RADIUS = 16;

const int = (min: number, max?: number) => {
  let schema = z.number().int('must be an integer').min(min, `must be at least ${min}`);
  if (max !== undefined) schema = schema.max(max, `must be at most ${max}`);
  return schema;
};

export const obstaclesDepthAttributes = z.strictObject({
  camera_name: z.string('is required and must be a string').min(1, 'must not be empty'),
  min_points_in_plane: int(0).default(500),
  min_points_in_segment: int(1).default(10),
  max_dist_from_plane_mm: z.number('must be a number').positive('must be greater than 0').default(100),
  ground_angle_tolerance_degs: int(0, 90).default(30),
  // Cost grows with the square of the radius (window of (2r+1)^2 pixels), hence the cap.
  clustering_radius: int(1, MAX_CLUSTERING_RADIUS).default(1),
  // A percentage probability threshold; 100 would link nothing at all.
  clustering_strictness: int(1, 99).default(5),
});

export type ObstaclesDepthAttributes = z.output<typeof obstaclesDepthAttributes>;

/** Validates raw attributes; throws ConfigError naming `<basePath>.<attribute>` and the rule. */
export function parseObstaclesDepthAttributes(raw: unknown, basePath = 'attributes'): ObstaclesDepthAttributes {
  return parseConfig(obstaclesDepthAttributes, raw ?? {}, basePath);
}

/** The segmenter's parameters: the attributes without the camera. */
export type SegmenterParams = Omit<ObstaclesDepthAttributes, 'camera_name'>;
