import type { Resource } from '../contract.js';
import { defineApi } from '../api.js';

export const SENSOR_API = defineApi<Sensor>('core:component:sensor');

export interface Sensor extends Resource {
  /** The current readings, by name. Values must be JSON-compatible. */
  getReadings(extra?: Record<string, unknown>): Promise<Record<string, unknown>> | Record<string, unknown>;
}
