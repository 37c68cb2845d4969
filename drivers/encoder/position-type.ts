import type { EncoderPosition, PositionType } from '../../plugins/apis/encoder.js';
import { invalidArgument } from '../../plugins/errors.js';

/** Tick-counting encoders answer in ticks; asking them for degrees is an error naming the field. */
export function ticksPosition(value: number, type?: PositionType): EncoderPosition {
  if (type === 'degrees') throw invalidArgument('position_type ANGLE_DEGREES: not supported by this encoder; it counts ticks (use TICKS_COUNT)');
  return { value, type: 'ticks' };
}

export const TICKS_ONLY = { ticksCountSupported: true, angleDegreesSupported: false } as const;
