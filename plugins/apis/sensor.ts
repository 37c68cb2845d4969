import type { Resource } from '../contract.js';

export const SENSOR_API = 'core:component:sensor';

export interface Sensor extends Resource {
  /** The current readings, by name. Values must be JSON-compatible. */
  getReadings(extra?: Record<string, unknown>): Promise<Record<string, unknown>> | Record<string, unknown>;
}
