// The `fake` encoder: a simulated shaft whose position advances at a speed, set with DoCommand or, when a
// motor names it, following that motor's power (power x max_rpm). For developing without hardware.
import * as z from 'zod';
import { ENCODER_API } from '../../../plugins/apis/encoder.js';
import { defineModel } from '../../../plugins/contract.js';

export const fakeEncoderAttributes = z.strictObject({
  /** Ticks per revolution of the simulated shaft. */
  ticks_per_rotation: z.number().int('must be an integer').positive('must be greater than 0').default(100),
  /** Shaft speed at full motor power. */
  max_rpm: z.number().positive('must be greater than 0').default(100),
  /** Starting speed, until a motor or DoCommand set_speed changes it. */
  speed_rpm: z.number().default(0),
});

export type FakeEncoderAttributes = z.output<typeof fakeEncoderAttributes>;

export const fakeEncoderModel = defineModel({
  api: ENCODER_API,
  model: 'fake',
  attributes: fakeEncoderAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A simulated encoder that turns at a set speed or follows the power of the motor using it.',
});
