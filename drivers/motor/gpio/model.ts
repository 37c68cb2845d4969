// The `gpio` motor: a brushed or brushless DC motor behind a motor driver chip wired to a board's pins
// (SPEC.md "Motor model gpio"). Optional encoder for closed-loop GoFor/GoTo/SetRPM and position.
import * as z from 'zod';
import { MOTOR_API } from '../../../plugins/apis/motor.js';
import { defineModel } from '../../../plugins/contract.js';
import { DEFAULT_PWM_FREQ, describePins, WIRING_RULE, wiringOf } from './wiring.js';
import { BOARD_API } from '../../../plugins/apis/board.js';
import { ENCODER_API } from '../../../plugins/apis/encoder.js';

const pin = z.string({ error: 'must be a string holding a board pin number, e.g. "12"' }).min(1, 'must not be empty');

export const gpioMotorAttributes = z
  .strictObject({
    board: z.string({ error: 'is required: the name of the board the motor driver is wired to' }).min(1, 'must not be empty'),
    pins: z.strictObject(
      {
        a: pin.optional(),
        b: pin.optional(),
        dir: pin.optional(),
        pwm: pin.optional(),
        en_high: pin.optional(),
        en_low: pin.optional(),
      },
      { error: 'is required: the driver pins, e.g. {"pwm": "12", "dir": "16"}' },
    ),
    min_power_pct: z.number().min(0, 'must be at least 0').max(1, 'must be at most 1').default(0),
    max_power_pct: z.number().min(0.06, 'must be at least 0.06').max(1, 'must be at most 1').default(1),
    pwm_freq: z.number().int('must be an integer').min(1, 'must be at least 1').max(1_000_000, 'must be at most 1000000').default(DEFAULT_PWM_FREQ),
    dir_flip: z.boolean().default(false),
    encoder: z.string().min(1, 'must not be empty').optional(),
    /** Speed at full power; required without an encoder (GoFor runs open loop at rpm/max_rpm power). */
    max_rpm: z.number().positive('must be greater than 0').optional(),
    /** Encoder ticks per revolution of the motor shaft; required with an encoder. */
    ticks_per_rotation: z.number().int('must be an integer').positive('must be greater than 0').optional(),
  })
  .superRefine((attrs, ctx) => {
    if (!wiringOf(attrs.pins)) ctx.addIssue({ code: 'custom', path: ['pins'], message: `${WIRING_RULE}; got ${describePins(attrs.pins)}` });
    const used = new Map<string, string>();
    for (const [role, p] of Object.entries(attrs.pins)) {
      if (p === undefined) continue;
      const other = used.get(p);
      if (other) ctx.addIssue({ code: 'custom', path: ['pins', role], message: `pin ${p} is already used as ${other}` });
      used.set(p, role);
    }
    if (attrs.min_power_pct > attrs.max_power_pct) {
      ctx.addIssue({ code: 'custom', path: ['min_power_pct'], message: `must be no greater than max_power_pct (${attrs.max_power_pct})` });
    }
    if (!attrs.encoder && attrs.max_rpm === undefined) ctx.addIssue({ code: 'custom', path: ['max_rpm'], message: MAX_RPM_RULE });
    if (attrs.encoder && attrs.ticks_per_rotation === undefined)
      ctx.addIssue({ code: 'custom', path: ['ticks_per_rotation'], message: 'is required when the motor has an encoder' });
  });

/**
 * Why max_rpm is asked for: SPEC's attribute table does not list it, so the message says what it is for
 * and how to do without it.
 */
export const MAX_RPM_RULE =
  'is required when the motor has no encoder: it is the speed (rpm) at full power, with which SetRPM and GoFor run the motor open loop at rpm / max_rpm power (e.g. "max_rpm": 200); or name an encoder to measure the speed instead';

export type GpioMotorAttributes = z.output<typeof gpioMotorAttributes>;

export const gpioMotorModel = defineModel({
  api: MOTOR_API,
  model: 'gpio',
  attributes: gpioMotorAttributes,
  implicitDependencies: (attrs) => [
    { name: attrs.board, api: BOARD_API, field: 'board' },
    ...(attrs.encoder ? [{ name: attrs.encoder, api: ENCODER_API, field: 'encoder' }] : []),
  ],
  driver: new URL('./driver.js', import.meta.url),
  description: 'A DC motor behind a driver chip on a board: pwm+dir, a+b or a+b+pwm wiring, optional encoder.',
});
