// The user-facing `readings` relation: the columns FACTS.md lists for the reference's SQL table, read from
// the shared `tabular_data` table and scoped to one organisation. It is created as a TEMP view on the
// query's own connection, so it is invisible to every other connection and gone when the query ends.
import { invalidArgument } from '../../../core/serving/status-error.js';

export const READINGS_COLUMNS = [
  'organization_id',
  'location_id',
  'robot_id',
  'robot_name',
  'part_id',
  'part_name',
  'component_type',
  'component_name',
  'method_name',
  'time_requested',
  'time_received',
  'time_synced',
  'tags',
  'additional_parameters',
  'data',
] as const;

const SELECT_LIST = READINGS_COLUMNS.map((c) => (c === 'additional_parameters' ? 'method_parameters AS additional_parameters' : c)).join(', ');

/** Rejects ids that cannot be an organisation id before they get anywhere near SQL text. */
export function checkOrganizationId(organizationId: string): string {
  if (typeof organizationId !== 'string' || organizationId.trim() === '') throw invalidArgument('organization_id: must not be empty');
  if (organizationId.length > 128 || /[\u0000-\u001f]/.test(organizationId)) {
    throw invalidArgument('organization_id: must be at most 128 printable characters');
  }
  return organizationId;
}

/** A SQL string literal. DuckDB string literals have no backslash escapes, so doubling quotes is complete. */
export const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;

// Platform-internal points (tag platform:internal) are not user data, as in TabularDataByFilter.
/** The WHERE terms that scope tabular_data to one organisation's user data, optionally received since `since`. */
export function readingsScope(organizationId: string, since?: Date): string[] {
  const where = [`organization_id = ${sqlString(checkOrganizationId(organizationId))}`, 'NOT coalesce(internal, false)'];
  if (since) where.push(`time_received >= ${sqlString(since.toISOString())}::TIMESTAMPTZ`);
  return where;
}

/** The SELECT that defines `readings` for one organisation, optionally only data received since `since`. */
export function readingsSelect(organizationId: string, since?: Date): string {
  return `SELECT ${SELECT_LIST} FROM main.tabular_data WHERE ${readingsScope(organizationId, since).join(' AND ')}`;
}

export const createReadingsView = (organizationId: string, since?: Date) => `CREATE OR REPLACE TEMP VIEW readings AS ${readingsSelect(organizationId, since)}`;
