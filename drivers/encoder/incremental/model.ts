// The `incremental` encoder: a quadrature encoder whose two channels are wired to two digital interrupts
// of a board; it counts every edge of both (four counts per cycle) and knows the direction itself.
import * as z from 'zod';
import { ENCODER_API } from '../../../plugins/apis/encoder.js';
import { defineModel } from '../../../plugins/contract.js';
import { BOARD_API } from '../../../plugins/apis/board.js';

const name = z.string().min(1, 'must not be empty');

export const incrementalEncoderAttributes = z
  .strictObject({
    board: name,
    /** The names of the board's digital interrupts that channels a and b are wired to. */
    pins: z.strictObject({ a: name, b: name }),
  })
  .refine((attrs) => attrs.pins.a !== attrs.pins.b, { path: ['pins', 'b'], message: 'must differ from pins.a' });

export type IncrementalEncoderAttributes = z.output<typeof incrementalEncoderAttributes>;

export const incrementalEncoderModel = defineModel({
  api: ENCODER_API,
  model: 'incremental',
  attributes: incrementalEncoderAttributes,
  implicitDependencies: (attrs) => [{ name: attrs.board, api: BOARD_API, field: 'board' }],
  driver: new URL('./driver.js', import.meta.url),
  description: 'A quadrature encoder on two digital interrupts of a board.',
});
