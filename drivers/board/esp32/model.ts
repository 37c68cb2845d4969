// The `esp32` board: the pin model of an esp32 with the rules of its LEDC PWM hardware (4 timers,
// 8 channels: at most 4 distinct PWM frequencies; a gpio motor's PWM runs at 10000 Hz). The runtime does
// not run on the microcontroller itself, so pin state lives in memory like the fake board's (with the
// same analogs, digital interrupts and simulated motors): it checks configs and code against esp32 limits.
import { BOARD_API } from '../../../plugins/apis/board.js';
import { defineModel } from '../../../plugins/contract.js';
import { fakeBoardAttributes } from '../fake/model.js';

export const esp32BoardAttributes = fakeBoardAttributes;

export const esp32BoardModel = defineModel({
  api: BOARD_API,
  model: 'esp32',
  attributes: esp32BoardAttributes,
  driver: new URL('./driver.js', import.meta.url),
  description: 'An esp32 pin model with its PWM timer rules: at most 4 distinct frequencies on 8 channels.',
});
