import type { AnalogValue, Board } from '../../../plugins/apis/board.js';
import { defineDriver } from '../../../plugins/contract.js';
import { invalidArgument } from '../../../plugins/errors.js';
import type { FakeBoardAttributes } from './model.js';

/**
 * GPIO level and PWM state are separate registers per pin, as a driver sees them: setting a duty does
 * not change the digital level that GetGPIO reports, so callers can observe both independently.
 * A rising edge written with setGPIO on a digital interrupt's pin counts as one tick of that interrupt.
 */
export function createFakeBoard(attributes: FakeBoardAttributes): Board {
  const levels = new Map<string, boolean>();
  const duties = new Map<string, number>();
  const frequencies = new Map<string, number>();
  const analogs = new Map(attributes.analogs.map((a) => [a.name, { ...a }]));
  const interruptsByPin = new Map(attributes.digital_interrupts.map((d) => [d.pin, d.name]));
  const ticks = new Map(attributes.digital_interrupts.map((d) => [d.name, 0]));

  const checkPin = (pin: string) => {
    if (typeof pin !== 'string' || pin.length === 0) throw invalidArgument('pin must be a non-empty string');
  };

  return {
    setGPIO(pin, high) {
      checkPin(pin);
      const was = levels.get(pin) ?? false;
      levels.set(pin, Boolean(high));
      const interrupt = interruptsByPin.get(pin);
      if (interrupt && high && !was) ticks.set(interrupt, (ticks.get(interrupt) ?? 0) + 1);
    },
    getGPIO(pin) {
      checkPin(pin);
      return levels.get(pin) ?? false;
    },
    setPWM(pin, dutyPct) {
      checkPin(pin);
      if (!Number.isFinite(dutyPct) || dutyPct < 0 || dutyPct > 1) throw invalidArgument(`duty_pct ${dutyPct}: must be between 0 and 1`);
      duties.set(pin, dutyPct);
    },
    pwm(pin) {
      checkPin(pin);
      return duties.get(pin) ?? 0;
    },
    setPWMFrequency(pin, frequencyHz) {
      checkPin(pin);
      if (!Number.isInteger(frequencyHz) || frequencyHz < 0) throw invalidArgument(`frequency_hz ${frequencyHz}: must be a whole number of Hz, at least 0`);
      frequencies.set(pin, frequencyHz);
    },
    pwmFrequency(pin) {
      checkPin(pin);
      return frequencies.get(pin) ?? 0;
    },
    readAnalogReader(reader): AnalogValue {
      const analog = analogs.get(reader);
      if (!analog) throw invalidArgument(`analog_reader_name ${JSON.stringify(reader)}: no such analog reader on this board`);
      return { value: analog.value, minRange: analog.min_range, maxRange: analog.max_range, stepSize: analog.step_size };
    },
    getDigitalInterruptValue(interrupt) {
      const value = ticks.get(interrupt);
      if (value === undefined) throw invalidArgument(`digital_interrupt_name ${JSON.stringify(interrupt)}: no such digital interrupt on this board`);
      return value;
    },
    doCommand(command) {
      // Simulation controls: set an analog value, or add ticks to a digital interrupt.
      const set = command.set_analog as { name?: string; value?: number } | undefined;
      if (set) {
        const analog = analogs.get(String(set.name));
        if (!analog) throw invalidArgument(`set_analog.name ${JSON.stringify(set.name)}: no such analog reader`);
        if (!Number.isInteger(set.value)) throw invalidArgument('set_analog.value: must be an integer');
        analog.value = set.value as number;
        return { ok: true };
      }
      const tick = command.tick as { name?: string; count?: number } | undefined;
      if (tick) {
        const name = String(tick.name);
        if (!ticks.has(name)) throw invalidArgument(`tick.name ${JSON.stringify(tick.name)}: no such digital interrupt`);
        ticks.set(name, (ticks.get(name) ?? 0) + (tick.count ?? 1));
        return { value: ticks.get(name) };
      }
      throw invalidArgument(`unknown command; the fake board accepts set_analog or tick`);
    },
  };
}

export default defineDriver<FakeBoardAttributes, Board>(({ attributes }) => createFakeBoard(attributes));
