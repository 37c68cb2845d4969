import type { Encoder } from '../../../plugins/apis/encoder.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { ticksPosition, TICKS_ONLY } from '../position-type.js';
import type { FakeEncoderAttributes } from './model.js';

export function createFakeEncoder(attrs: FakeEncoderAttributes, now: () => number = () => performance.now()): Encoder {
  let ticks = 0; // fractional; reported truncated, as a real counter would
  let rpm = attrs.speed_rpm;
  let since = now();
  const advance = () => {
    const t = now();
    ticks += ((rpm / 60) * attrs.ticks_per_rotation * (t - since)) / 1000;
    since = t;
  };
  return {
    getPosition(type) {
      advance();
      return ticksPosition(Math.trunc(ticks), type);
    },
    resetPosition() {
      advance();
      ticks = 0;
    },
    getProperties: () => TICKS_ONLY,
    motorPowerChanged(powerPct) {
      if (!Number.isFinite(powerPct)) throw invalidArgument(`power ${powerPct}: must be a number`);
      advance();
      rpm = powerPct * attrs.max_rpm;
    },
    doCommand(command) {
      advance();
      if ('set_speed' in command) {
        const speed = Number(command.set_speed);
        if (!Number.isFinite(speed)) throw invalidArgument('set_speed: must be a number of rpm');
        rpm = speed;
        return { speed_rpm: rpm };
      }
      if ('set_position' in command) {
        const position = Number(command.set_position);
        if (!Number.isInteger(position)) throw invalidArgument('set_position: must be a whole number of ticks');
        ticks = position;
        return { position };
      }
      if ('status' in command) return { speed_rpm: rpm, position: Math.trunc(ticks) };
      throw invalidArgument('unknown command; the fake encoder accepts set_speed, set_position or status');
    },
  };
}

export default defineDriver<FakeEncoderAttributes, Encoder>(({ attributes }) => createFakeEncoder(attributes));
