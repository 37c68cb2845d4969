// The resource APIs the runtime serves. A new API adds its adapter here.
import type { ApiAdapter } from '../api-adapter.js';
import { boardAdapter } from './board.js';
import { motorAdapter } from './motor.js';
import { encoderAdapter } from './encoder.js';
import { sensorAdapter } from './sensor.js';
import { cameraAdapter } from './camera.js';
import { visionAdapter } from './vision.js';
import { dataManagerAdapter } from './data-manager.js';
import { mlmodelAdapter } from './mlmodel.js';

export const apiAdapters: readonly ApiAdapter[] = [
  boardAdapter,
  motorAdapter,
  encoderAdapter,
  sensorAdapter,
  cameraAdapter,
  visionAdapter,
  dataManagerAdapter,
  mlmodelAdapter,
];
