// The image_file camera: serves a colour image from a PNG or JPEG file, or cycles through the images of a
// folder, one per GetImage. Useful to run classifiers and detectors on recorded images.
import * as z from 'zod';
import { CAMERA_API } from '../../../plugins/apis/camera.js';
import { defineModel } from '../../../plugins/contract.js';

export const imageFileAttributes = z.strictObject({
  /** A .png/.jpg/.jpeg file, or a folder whose such files (sorted by name) are served in turn. */
  color_image_file_path: z.string().min(1, 'must be the path of an image file or a folder of images'),
});

export type ImageFileAttributes = z.output<typeof imageFileAttributes>;

export const imageFileCameraModel = defineModel({
  api: CAMERA_API,
  model: 'image_file',
  attributes: imageFileAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A camera that serves colour images from a file or cycles through a folder of PNG/JPEG images.',
});
