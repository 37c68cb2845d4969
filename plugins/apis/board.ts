import type { Resource } from '../contract.js';

export const BOARD_API = 'core:component:board';

export interface AnalogValue {
  value: number;
  minRange: number;
  maxRange: number;
  stepSize: number;
}

/** A board's pins are named by strings holding the board's pin number (or a name the board defines). */
export interface Board extends Resource {
  setGPIO(pin: string, high: boolean): Promise<void> | void;
  getGPIO(pin: string): Promise<boolean> | boolean;
  /** dutyPct is from 0 to 1. */
  setPWM(pin: string, dutyPct: number): Promise<void> | void;
  pwm(pin: string): Promise<number> | number;
  setPWMFrequency(pin: string, frequencyHz: number): Promise<void> | void;
  pwmFrequency(pin: string): Promise<number> | number;
  readAnalogReader(reader: string): Promise<AnalogValue> | AnalogValue;
  getDigitalInterruptValue(interrupt: string): Promise<number> | number;
}
