// The resource APIs the runtime serves. A new API adds its adapter here.
import type { ApiAdapter } from '../api-adapter.js';
import { boardAdapter } from './board.js';
import { sensorAdapter } from './sensor.js';

export const apiAdapters: readonly ApiAdapter[] = [boardAdapter, sensorAdapter];
