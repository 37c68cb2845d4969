import type { Resource } from '../contract.js';
import { defineApi } from '../api.js';
import { callOf, tabular } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

export const ENCODER_API = defineApi<Encoder>('core:component:encoder');

export type PositionType = 'ticks' | 'degrees';

export interface EncoderPosition {
  value: number;
  type: PositionType;
}

export interface EncoderProperties {
  ticksCountSupported: boolean;
  angleDegreesSupported: boolean;
}

/** A rotary encoder. */
export interface Encoder extends Resource {
  /** The position in the requested unit, or the encoder's own unit when none is asked for. */
  getPosition(type?: PositionType): Promise<EncoderPosition> | EncoderPosition;
  /** Makes the current position read as zero. */
  resetPosition(): Promise<void> | void;
  getProperties(): Promise<EncoderProperties> | EncoderProperties;
  /**
   * Told by the motor that names this encoder whenever it applies power (signed, -1 to 1). Encoders that
   * cannot sense direction (`single`) take their sign from it; simulated ones (`fake`) move with it.
   * Quadrature encoders ignore it; encoders without the method are simply not told.
   */
  motorPowerChanged?(powerPct: number): Promise<void> | void;
}

export const ENCODER_DECLARATION: ApiDeclaration = {
  api: ENCODER_API,
  capture: {
    Position: {
      kind: 'tabular',
      calls: () => callOf('getPosition'),
      shape: ([value]) => {
        const position = value as EncoderPosition;
        return tabular({ value: position.value, position_type: position.type });
      },
    },
  },
};
