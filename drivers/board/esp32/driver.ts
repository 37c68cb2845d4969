import type { Board, BoardCapabilities } from '../../../plugins/apis/board.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import type { FakeBoardAttributes } from '../fake/model.js';
import { createFakeBoard } from '../fake/driver.js';
import { ESP32_PWM_CHANNELS, ESP32_PWM_TIMERS, LedcAllocator } from './ledc.js';

/** A gpio motor on an esp32 runs its PWM at this frequency (SPEC.md), so all motors share one timer. */
export const ESP32_MOTOR_PWM_HZ = 10_000;
/** The frequency a pin gets when PWM starts on it before any SetPWMFrequency. */
export const ESP32_DEFAULT_PWM_HZ = 1_000;

export function createEsp32Board(attributes: FakeBoardAttributes): Board & { close(): void } {
  const pins = createFakeBoard(attributes, 'esp32');
  const ledc = new LedcAllocator();
  const assign = (pin: string, frequencyHz: number) => {
    try {
      ledc.assign(pin, frequencyHz);
    } catch (err) {
      throw invalidArgument((err as Error).message);
    }
  };
  return {
    ...pins,
    setPWMFrequency(pin, frequencyHz) {
      if (!Number.isInteger(frequencyHz) || frequencyHz < 0) throw invalidArgument(`frequency_hz ${frequencyHz}: must be a whole number of Hz, at least 0`);
      assign(pin, frequencyHz);
      pins.setPWMFrequency(pin, frequencyHz);
    },
    setPWM(pin, dutyPct) {
      if (dutyPct > 0 && !ledc.has(pin)) {
        assign(pin, ESP32_DEFAULT_PWM_HZ);
        pins.setPWMFrequency(pin, ESP32_DEFAULT_PWM_HZ);
      }
      pins.setPWM(pin, dutyPct);
    },
    capabilities(): BoardCapabilities {
      return {
        ...(pins.capabilities!() as BoardCapabilities),
        motorPwmFrequencyHz: ESP32_MOTOR_PWM_HZ,
        pwmTimers: ESP32_PWM_TIMERS,
        pwmChannels: ESP32_PWM_CHANNELS,
      };
    },
    doCommand(command) {
      if ('pwm_timers' in command) return { timers: ledc.timersInUse() };
      if (['set_analog', 'tick', 'simulated_motor'].some((k) => k in command)) return pins.doCommand!(command);
      throw invalidArgument('unknown command; the esp32 board accepts pwm_timers, set_analog, tick or simulated_motor');
    },
  };
}

export default defineDriver<FakeBoardAttributes, Board>(({ attributes }) => createEsp32Board(attributes));
