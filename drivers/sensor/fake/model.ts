// The `fake` sensor: returns the readings it was configured with, optionally varying, so the runtime has
// something real to serve on a laptop. A simulated device, documented as such in the README.
import * as z from 'zod';
import { SENSOR_API } from '../../../plugins/apis/sensor.js';
import { defineModel } from '../../../plugins/contract.js';

export const fakeSensorAttributes = z.strictObject({
  /** The readings to return, by name. Values must be JSON-compatible. */
  readings: z.record(z.string(), z.json()).default({ a: 1, b: 2, c: 3 }),
  /** When set, every numeric reading gets uniform noise of +/- this amount on each call. */
  noise: z.number().min(0, 'must be at least 0').optional(),
  /** When true, a `count` reading counts the calls since construction. */
  count_calls: z.boolean().default(false),
});

export type FakeSensorAttributes = z.output<typeof fakeSensorAttributes>;

export const fakeSensorModel = defineModel({
  api: SENSOR_API,
  model: 'fake',
  attributes: fakeSensorAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A simulated sensor returning configured readings.',
});
