import type { Resource } from '../contract.js';
import { defineApi } from '../api.js';
import { callOf, tabular } from '../capture.js';
import type { ApiDeclaration } from './declaration.js';

export const SENSOR_API = defineApi<Sensor>('core:component:sensor');

export interface Sensor extends Resource {
  /** The current readings, by name. Values must be JSON-compatible. */
  getReadings(extra?: Record<string, unknown>): Promise<Record<string, unknown>> | Record<string, unknown>;
}

export const SENSOR_DECLARATION: ApiDeclaration = {
  api: SENSOR_API,
  capture: {
    // The cloud's sensor data must carry the key "readings".
    Readings: { kind: 'tabular', calls: (p) => callOf('getReadings', p), shape: ([readings]) => tabular({ readings: readings as Record<string, unknown> }) },
  },
};
