// The `pi` board: a Raspberry Pi's GPIO, hardware-timed PWM and edge interrupts through the pigpio C
// library (optional package pigpio; the runtime must run as root on the Pi), and its I2C buses through
// i2c-bus (optional). Pins are BCM GPIO numbers as strings ("12").
import * as z from 'zod';
import { BOARD_API } from '../../../plugins/apis/board.js';
import { defineModel } from '../../../plugins/contract.js';

const bcm = z.string().regex(/^([0-9]|[1-4][0-9]|5[0-3])$/, 'must be a BCM GPIO number from 0 to 53, as a string');

export const piBoardAttributes = z
  .strictObject({
    digital_interrupts: z.array(z.strictObject({ name: z.string().min(1, 'must not be empty'), pin: bcm })).default([]),
    /** I2C buses by name; the default exposes /dev/i2c-1 (header pins 3 and 5) as bus "1". */
    i2c_buses: z
      .array(z.strictObject({ name: z.string().min(1, 'must not be empty'), bus: z.number().int('must be an integer').min(0, 'must be at least 0') }))
      .default([{ name: '1', bus: 1 }]),
  })
  .superRefine((attrs, ctx) => {
    const names = new Set<string>();
    attrs.digital_interrupts.forEach((d, i) => {
      if (names.has(d.name)) ctx.addIssue({ code: 'custom', path: ['digital_interrupts', i, 'name'], message: `duplicate digital interrupt name ${d.name}` });
      names.add(d.name);
    });
  });

export type PiBoardAttributes = z.output<typeof piBoardAttributes>;

export const piBoardModel = defineModel({
  api: BOARD_API,
  model: 'pi',
  attributes: piBoardAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A Raspberry Pi through pigpio (GPIO, PWM, interrupts) and i2c-bus (I2C); both optional packages.',
});
