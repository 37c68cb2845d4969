// Every built-in API's declaration, in one list: the runtime's actuator and capture tables read it.
import { BOARD_DECLARATION } from './board.js';
import { CAMERA_DECLARATION } from './camera.js';
import type { ApiDeclaration } from './declaration.js';
import { ENCODER_DECLARATION } from './encoder.js';
import { MOTOR_DECLARATION } from './motor.js';
import { SENSOR_DECLARATION } from './sensor.js';
import { VISION_DECLARATION } from './vision.js';

export const BUILT_IN_APIS: readonly ApiDeclaration[] = [
  SENSOR_DECLARATION,
  MOTOR_DECLARATION,
  ENCODER_DECLARATION,
  BOARD_DECLARATION,
  CAMERA_DECLARATION,
  VISION_DECLARATION,
];
