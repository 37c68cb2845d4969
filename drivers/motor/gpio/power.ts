// How a `gpio` motor turns a requested power into pin levels and a PWM duty, per wiring. Pure, so every
// wiring x dir_flip x power case is unit tested; the driver only applies the plan to the board.
import { wiringOf, type DriverPins } from './wiring.js';

/** |power| at or below this is a stop. */
export const STOP_THRESHOLD = 0.01;

export interface MotorPins extends DriverPins {
  en_high?: string;
  en_low?: string;
}

export interface PowerLimits {
  min_power_pct: number;
  max_power_pct: number;
}

/** The power actually applied: 0 for |p| <= 0.01, else clamped to +-max and raised to at least min. */
export function effectivePower(power: number, limits: PowerLimits): number {
  if (!Number.isFinite(power) || Math.abs(power) <= STOP_THRESHOLD) return 0;
  const magnitude = Math.max(Math.min(Math.abs(power), limits.max_power_pct), limits.min_power_pct);
  return Math.sign(power) * magnitude;
}

export interface PinPlan {
  /** Digital levels to write, in order (after the PWM duties of `pwmOff`). */
  levels: Array<[pin: string, high: boolean]>;
  /** Pins that may carry PWM but carry none in this plan: their duty is set to 0 first. */
  pwmOff: string[];
  /** The pin carrying PWM and its duty (0..1), if any. */
  pwm?: { pin: string; duty: number };
}

/** The pins that may carry PWM in this wiring (a+b alternates PWM between a and b). */
export function pwmPins(pins: MotorPins): string[] {
  return wiringOf(pins) === 'a+b' ? [pins.a!, pins.b!] : [pins.pwm!];
}

/** The plan for an already-effective power (see effectivePower); power 0 is a stop: every pin low. */
export function planPins(pins: MotorPins, dirFlip: boolean, power: number): PinPlan {
  const wiring = wiringOf(pins);
  if (!wiring) throw new Error('planPins: invalid wiring (config validation should have refused it)');
  const enable: Array<[string, boolean]> = [];
  const on = power !== 0;
  if (pins.en_high) enable.push([pins.en_high, on]);
  if (pins.en_low) enable.push([pins.en_low, !on]);
  if (!on) {
    const low = (['a', 'b', 'dir'] as const).filter((p) => pins[p]).map((p): [string, boolean] => [pins[p]!, false]);
    return { levels: [...low, ...enable], pwmOff: pwmPins(pins) };
  }
  const forward = power > 0 !== dirFlip;
  const magnitude = Math.abs(power);
  switch (wiring) {
    case 'pwm+dir':
      return { levels: [[pins.dir!, forward], ...enable], pwmOff: [], pwm: { pin: pins.pwm!, duty: magnitude } };
    case 'a+b+pwm':
      return { levels: [[pins.a!, forward], [pins.b!, !forward], ...enable], pwmOff: [], pwm: { pin: pins.pwm!, duty: magnitude } };
    case 'a+b': {
      // One pin is held high; the other carries PWM, and the bridge drives while it is low: duty 1-|p|.
      const [high, modulated] = forward ? [pins.a!, pins.b!] : [pins.b!, pins.a!];
      return { levels: [[high, true], [modulated, false], ...enable], pwmOff: [high], pwm: { pin: modulated, duty: roundDuty(1 - magnitude) } };
    }
  }
}

/** 1 - |p| in floating point gives 0.30000000000000004; boards take duties to 1e-9 at best. */
function roundDuty(duty: number): number {
  return Math.round(duty * 1e9) / 1e9;
}
