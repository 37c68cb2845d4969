// The mlmodel vision service: classifies images or detects objects in them with an ML model service,
// on images given in the request or taken from a camera. Its mlmodel_name (and camera_name) are implicit
// dependencies.
import * as z from 'zod';
import { VISION_API } from '../../../plugins/apis/vision.js';
import { defineModel } from '../../../plugins/contract.js';

const confidence = z.number().min(0, 'must be at least 0').max(1, 'must be at most 1');
const triple = (rule: z.ZodNumber) => z.tuple([rule, rule, rule], { message: 'must be three numbers (red, green, blue)' });

export const mlmodelVisionAttributes = z.strictObject({
  /** The core:service:mlmodel service that runs the model. */
  mlmodel_name: z.string().min(1, 'must name an mlmodel service'),
  /** The camera of GetClassificationsFromCamera / GetDetectionsFromCamera when the request names none. */
  camera_name: z.string().min(1, 'must name a camera').optional(),
  /** Minimum confidence of an answer; unset: 0 for classifications, 0.05 for detections (the trainer's). */
  default_minimum_confidence: confidence.optional(),
  /** Minimum confidence per label, over default_minimum_confidence. */
  label_confidences: z.record(z.string(), confidence).default({}),
  /** Model tensor name -> the name this service uses ("image"). */
  remap_input_names: z.record(z.string(), z.string()).default({}),
  /** Model tensor name -> the name this service uses ("probabilities", "boxes", "scores"). */
  remap_output_names: z.record(z.string(), z.string()).default({}),
  /** Subtracted from each channel after scaling to [0, 1]; the built-in trainer's models use none. */
  input_image_mean_value: triple(z.number()).default([0, 0, 0]),
  /** Then divided by; the built-in trainer's models use 1. */
  input_image_std_dev: triple(z.number().positive('must be above 0')).default([1, 1, 1]),
});

export type MlmodelVisionAttributes = z.output<typeof mlmodelVisionAttributes>;

export const mlmodelVisionModel = defineModel({
  api: VISION_API,
  model: 'mlmodel',
  attributes: mlmodelVisionAttributes,
  implicitDependencies: (attributes) => [attributes.mlmodel_name, ...(attributes.camera_name ? [attributes.camera_name] : [])],
  driver: new URL('./driver.js', import.meta.url),
  description: 'Classifies images and detects objects with an ML model service (models of the built-in trainer).',
});
