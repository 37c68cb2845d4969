// The `fake` board: a simulated board whose GPIO levels, PWM duty cycles and frequencies, analog readers
// and digital interrupts live in memory. It is a product feature (develop and test without hardware),
// documented in the README, not a stand-in for the real `pi` driver.
import { z } from 'zod';
import { BOARD_API } from '../../../plugins/apis/board.js';
import { defineModel } from '../../../plugins/contract.js';

const analogReader = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  pin: z.string().min(1, 'must not be empty'),
  /** The value the reader returns until a DoCommand set_analog changes it. */
  value: z.number().int('must be an integer').default(0),
  min_range: z.number().default(0),
  max_range: z.number().default(3.3),
  step_size: z.number().positive('must be greater than 0').default(3.3 / 4095),
});

const digitalInterrupt = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  pin: z.string().min(1, 'must not be empty'),
});

export const fakeBoardAttributes = z
  .strictObject({
    analogs: z.array(analogReader).default([]),
    digital_interrupts: z.array(digitalInterrupt).default([]),
  })
  .superRefine((attrs, ctx) => {
    const seen = new Set<string>();
    attrs.analogs.forEach((a, i) => {
      if (seen.has(a.name)) ctx.addIssue({ code: 'custom', path: ['analogs', i, 'name'], message: `duplicate analog reader name ${a.name}` });
      seen.add(a.name);
    });
    const interrupts = new Set<string>();
    attrs.digital_interrupts.forEach((d, i) => {
      if (interrupts.has(d.name)) ctx.addIssue({ code: 'custom', path: ['digital_interrupts', i, 'name'], message: `duplicate digital interrupt name ${d.name}` });
      interrupts.add(d.name);
    });
  });

export type FakeBoardAttributes = z.output<typeof fakeBoardAttributes>;

export const fakeBoardModel = defineModel({
  api: BOARD_API,
  model: 'fake',
  attributes: fakeBoardAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A simulated board: GPIO, PWM, analog readers and digital interrupts in memory.',
});
