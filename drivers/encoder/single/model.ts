// The `single` encoder: one channel on one digital interrupt of a board. It cannot sense direction, so it
// takes the sign of each count from the motor that names it (the motor reports its power to its encoder).
import * as z from 'zod';
import { ENCODER_API } from '../../../plugins/apis/encoder.js';
import { defineModel } from '../../../plugins/contract.js';
import { BOARD_API } from '../../../plugins/apis/board.js';

const name = z.string().min(1, 'must not be empty');

export const singleEncoderAttributes = z.strictObject({
  board: name,
  /** The name of the board's digital interrupt the channel is wired to. */
  pins: z.strictObject({ i: name }),
});

export type SingleEncoderAttributes = z.output<typeof singleEncoderAttributes>;

export const singleEncoderModel = defineModel({
  api: ENCODER_API,
  model: 'single',
  attributes: singleEncoderAttributes,
  implicitDependencies: (attrs) => [{ name: attrs.board, api: BOARD_API, field: 'board' }],
  driver: new URL('./driver.js', import.meta.url),
  description: 'A one-channel encoder on a digital interrupt; the motor using it supplies the direction.',
});
