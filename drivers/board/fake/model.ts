// The `fake` board: a simulated board whose GPIO levels, PWM duty cycles and frequencies, analog readers,
// digital interrupts and I2C devices live in memory, optionally with simulated motors whose encoders tick
// its interrupts. It is a product feature (develop and test without hardware), documented in
// the README (Motors, encoders and boards), not a stand-in for the real `pi` driver.
import * as z from 'zod';
import { BOARD_API } from '../../../plugins/apis/board.js';
import { defineModel } from '../../../plugins/contract.js';
import { describePins, WIRING_RULE, wiringOf } from '../../motor/gpio/wiring.js';

const pin = z.string().min(1, 'must not be empty');

const analogReader = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  pin,
  /** The value the reader returns until a DoCommand set_analog changes it. */
  value: z.number().int('must be an integer').default(0),
  min_range: z.number().default(0),
  max_range: z.number().default(3.3),
  step_size: z
    .number()
    .positive('must be greater than 0')
    .default(3.3 / 4095),
});

const digitalInterrupt = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  pin,
});

const simulatedMotor = z.strictObject({
  name: z.string().min(1, 'must not be empty'),
  /** The motor driver inputs the simulated motor reads, with the same wirings as the gpio motor. */
  pins: z.strictObject({ a: pin.optional(), b: pin.optional(), dir: pin.optional(), pwm: pin.optional() }),
  /** Speed at full power. */
  max_rpm: z.number().positive('must be greater than 0').max(100_000, 'must be at most 100000').default(100),
  /** Encoder counts per revolution: quadrature edges with two encoder pins, pulses with one. */
  ticks_per_rotation: z.number().int('must be an integer').positive('must be greater than 0').default(100),
  /** The pins the encoder's channels drive; a digital interrupt must be configured on each. */
  encoder_pins: z.strictObject({ a: pin, b: pin.optional() }),
});

const i2cDevice = z.strictObject({
  bus: z.string().min(1, 'must not be empty').default('1'),
  address: z.number().int('must be an integer').min(0x03, 'must be at least 0x03').max(0x77, 'must be at most 0x77 (7-bit)'),
  /** The initial register contents from register 0; the rest read as 0. */
  registers: z
    .array(z.number().int('must be an integer').min(0, 'must be at least 0').max(255, 'must be at most 255'))
    .max(256, 'must have at most 256 registers')
    .default([]),
});

export const fakeBoardAttributes = z
  .strictObject({
    analogs: z.array(analogReader).default([]),
    digital_interrupts: z.array(digitalInterrupt).default([]),
    simulated_motors: z.array(simulatedMotor).default([]),
    i2c_devices: z.array(i2cDevice).default([]),
  })
  .superRefine((attrs, ctx) => {
    const unique = (items: { name: string }[], field: string, what: string) => {
      const seen = new Set<string>();
      items.forEach((item, i) => {
        if (seen.has(item.name)) ctx.addIssue({ code: 'custom', path: [field, i, 'name'], message: `duplicate ${what} name ${item.name}` });
        seen.add(item.name);
      });
    };
    unique(attrs.analogs, 'analogs', 'analog reader');
    unique(attrs.digital_interrupts, 'digital_interrupts', 'digital interrupt');
    unique(attrs.simulated_motors, 'simulated_motors', 'simulated motor');
    const interruptPins = new Set(attrs.digital_interrupts.map((d) => d.pin));
    attrs.simulated_motors.forEach((m, i) => {
      if (!wiringOf(m.pins)) ctx.addIssue({ code: 'custom', path: ['simulated_motors', i, 'pins'], message: `${WIRING_RULE}; got ${describePins(m.pins)}` });
      for (const channel of ['a', 'b'] as const) {
        const p = m.encoder_pins[channel];
        if (p !== undefined && !interruptPins.has(p)) {
          ctx.addIssue({ code: 'custom', path: ['simulated_motors', i, 'encoder_pins', channel], message: `no digital interrupt is configured on pin ${p}` });
        }
      }
    });
    const devices = new Set<string>();
    attrs.i2c_devices.forEach((d, i) => {
      const key = `${d.bus}/${d.address}`;
      if (devices.has(key)) ctx.addIssue({ code: 'custom', path: ['i2c_devices', i, 'address'], message: `duplicate device ${d.address} on bus ${d.bus}` });
      devices.add(key);
    });
  });

export type FakeBoardAttributes = z.output<typeof fakeBoardAttributes>;

export const fakeBoardModel = defineModel({
  api: BOARD_API,
  model: 'fake',
  attributes: fakeBoardAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'A simulated board: GPIO, PWM, analog readers, digital interrupts, I2C devices and simulated encoder motors in memory.',
});
