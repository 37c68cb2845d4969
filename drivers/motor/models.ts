// The models of issue 4 beyond the fake board: the gpio motor, its encoders and the hardware boards.
import type { ModelDefinition } from '../../plugins/contract.js';
import { esp32BoardModel } from '../board/esp32/model.js';
import { piBoardModel } from '../board/pi/model.js';
import { fakeEncoderModel } from '../encoder/fake/model.js';
import { incrementalEncoderModel } from '../encoder/incremental/model.js';
import { singleEncoderModel } from '../encoder/single/model.js';
import { gpioMotorModel } from './gpio/model.js';

export const motorAndBoardModels: readonly ModelDefinition[] = [
  gpioMotorModel,
  incrementalEncoderModel,
  singleEncoderModel,
  fakeEncoderModel,
  piBoardModel,
  esp32BoardModel,
];
