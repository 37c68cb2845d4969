// The `maintenance` object of a machine config (SPEC.md): which sensor says whether a disruptive
// restart may happen now. Kept apart from the gate so that an agent without a window never loads gRPC.
export interface MaintenanceConfig {
  sensor_name: string;
  maintenance_allowed_key: string;
}

/** Reads the `maintenance` object of a machine config; anything malformed means "no window" plus a reason. */
export function maintenanceConfigOf(raw: unknown): { config?: MaintenanceConfig; error?: string } {
  if (raw === undefined || raw === null) return {};
  const m = raw as Record<string, unknown>;
  if (
    typeof m !== 'object' ||
    typeof m.sensor_name !== 'string' ||
    typeof m.maintenance_allowed_key !== 'string' ||
    !m.sensor_name ||
    !m.maintenance_allowed_key
  ) {
    return { error: 'maintenance needs sensor_name and maintenance_allowed_key strings; ignoring it' };
  }
  return { config: { sensor_name: m.sensor_name, maintenance_allowed_key: m.maintenance_allowed_key } };
}

/** `core:component:sensor/gate` -> `gate`; a bare name stays as it is. */
export function sensorResourceName(fullName: string): string {
  const slash = fullName.lastIndexOf('/');
  return slash >= 0 ? fullName.slice(slash + 1) : fullName;
}
