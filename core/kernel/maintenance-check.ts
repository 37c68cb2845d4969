// The maintenance window (SPEC.md): a sensor says whether it is safe to reconfigure. FACTS.md: the
// sensor is read before each reconfiguration; a missing or non-boolean key allows it; a read error
// blocks it.
import { SENSOR_API } from '../../plugins/apis/sensor.js';
import type { Maintenance } from '../config/machine-config.js';
import type { ResourceAccess } from './resource-access.js';

export interface MaintenanceVerdict {
  allowed: boolean;
  reason: string;
}

export async function checkMaintenance(access: Pick<ResourceAccess, 'resource'>, maintenance: Maintenance): Promise<MaintenanceVerdict> {
  const name = maintenance.sensor_name.slice(maintenance.sensor_name.indexOf('/') + 1);
  const api = maintenance.sensor_name.slice(0, maintenance.sensor_name.indexOf('/'));
  if (api !== SENSOR_API) return { allowed: false, reason: `maintenance sensor ${maintenance.sensor_name} is not a ${SENSOR_API}` };
  let readings: Record<string, unknown>;
  try {
    readings = await access.resource(name, SENSOR_API).getReadings();
  } catch (err) {
    return { allowed: false, reason: `maintenance sensor ${maintenance.sensor_name} could not be read: ${(err as Error).message}` };
  }
  const value = readings[maintenance.maintenance_allowed_key];
  if (typeof value !== 'boolean') {
    return {
      allowed: true,
      reason: `maintenance sensor reading ${maintenance.maintenance_allowed_key} is ${value === undefined ? 'missing' : 'not a boolean'}, so maintenance is allowed`,
    };
  }
  return value
    ? { allowed: true, reason: `maintenance sensor reading ${maintenance.maintenance_allowed_key} is true` }
    : { allowed: false, reason: `maintenance sensor reading ${maintenance.maintenance_allowed_key} is false` };
}
