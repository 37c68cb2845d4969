// The obstacles_depth vision service: segments its depth camera's point cloud into the objects standing
// on the ground plane. The camera named by camera_name is an implicit dependency.
import { VISION_API } from '../../../plugins/apis/vision.js';
import { defineModel } from '../../../plugins/contract.js';
import { obstaclesDepthAttributes } from './attributes.js';
import { CAMERA_API } from '../../../plugins/apis/camera.js';

export const obstaclesDepthModel = defineModel({
  api: VISION_API,
  model: 'obstacles_depth',
  attributes: obstaclesDepthAttributes,
  implicitDependencies: (attributes) => [{ name: attributes.camera_name, api: CAMERA_API, field: 'camera_name' }],
  driver: new URL('./driver.js', import.meta.url),
  description: 'A segmenter for depth cameras that finds well-separated objects above a flat ground plane.',
});
