import type { Resource } from '../contract.js';
import type { I2C } from './i2c.js';
import { defineApi } from '../api.js';
import { tabular } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

export const BOARD_API = defineApi<Board>('core:component:board');

export interface AnalogValue {
  value: number;
  minRange: number;
  maxRange: number;
  stepSize: number;
}

/** A board's pins are named by strings holding the board's pin number (or a name the board defines). */
export interface Board extends Resource, BoardExtras, Partial<I2C> {
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

/** One level change on a digital interrupt's pin, numbered in the order the board saw them. */
export interface InterruptEdge {
  interrupt: string;
  high: boolean;
  seq: number;
}

export interface InterruptEdges {
  /** Pass it back as `after` to get only newer edges. */
  cursor: number;
  /** The edges of the asked interrupts with seq > after, oldest first. */
  edges: InterruptEdge[];
  /** The current level of each asked interrupt's pin. */
  levels: Record<string, boolean>;
  /** True when edges after `after` were dropped because the caller fell behind the board's buffer. */
  lost: boolean;
}

/** What a board's hardware imposes on its users, e.g. the PWM frequency a motor driver must use. */
export interface BoardCapabilities {
  /** The board kind, e.g. `fake`, `pi`, `esp32`. */
  kind: string;
  /** When set, a `gpio` motor drives its PWM pin at this frequency instead of its pwm_freq (esp32: 10000). */
  motorPwmFrequencyHz?: number;
  /** How many distinct PWM frequencies the board can run at once, when limited (esp32: 4). */
  pwmTimers?: number;
  /** How many pins can carry PWM at once, when limited (esp32: 8). */
  pwmChannels?: number;
  /** The I2C buses the board exposes (see plugins/apis/i2c.ts). */
  i2cBuses?: string[];
}

/** Optional board features, used by encoders and motors when the board offers them. */
export interface BoardExtras {
  /** Edge log of digital interrupts, for quadrature decoding (the incremental encoder). */
  digitalInterruptEdges?(interrupts: string[], after: number): Promise<InterruptEdges> | InterruptEdges;
  capabilities?(): Promise<BoardCapabilities> | BoardCapabilities;
}

/** Names from additional_params values (Analogs: reader names, Gpios: pins), in key order. */
function namesIn(params: Record<string, unknown>): string[] {
  return Object.keys(params)
    .sort()
    .map((k) => params[k] as string);
}

function checkNames(what: string) {
  return (params: Record<string, unknown>): string | undefined => {
    const values = Object.values(params);
    if (values.length === 0) return `must name at least one ${what}, e.g. {"${what}_1": "..."}`;
    if (values.some((v) => typeof v !== 'string' || v === '')) return `every value must be a ${what} name (a non-empty string)`;
    return undefined;
  };
}

export const BOARD_DECLARATION: ApiDeclaration = {
  api: BOARD_API,
  capture: {
    Analogs: {
      kind: 'tabular',
      checkParams: checkNames('reader'),
      calls: (p) => namesIn(p).map((reader) => ({ method: 'readAnalogReader', args: [reader] })),
      shape: (values, p) => {
        const analogs: Record<string, unknown> = {};
        namesIn(p).forEach((reader, i) => {
          const v = values[i] as AnalogValue;
          analogs[reader] = { value: v.value, min_range: v.minRange, max_range: v.maxRange, step_size: v.stepSize };
        });
        return tabular({ analogs });
      },
    },
    Gpios: {
      kind: 'tabular',
      checkParams: checkNames('pin'),
      calls: (p) => namesIn(p).map((pin) => ({ method: 'getGPIO', args: [pin] })),
      shape: (values, p) => {
        const gpios: Record<string, boolean> = {};
        namesIn(p).forEach((pin, i) => (gpios[pin] = values[i] as boolean));
        return tabular({ gpios });
      },
    },
  },
};
