// The places a user browses: the caller's organization, its locations and machines (with their parts),
// each narrowed to what the caller's API key can see. A key belongs to one organization; a location- or
// machine-scoped key sees only its location or machine (the Authorizer's `covers` rule, applied per row).
import type { Metadata } from '@grpc/grpc-js';
import type { Location, Machine, Organization, PartSummary } from '../../gen/platform/app/v1/robot_part.js';
import { invalidArgument, permissionDenied } from '../../core/serving/status-error.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type KeyPrincipal } from '../auth/principal.js';
import type { TabularStore } from '../store/tabular.js';
import type { PartStatusBook } from './part-status.js';

async function keyOf(authorizer: Authorizer, md: Metadata): Promise<KeyPrincipal> {
  const principal = await authorizer.authenticate(md);
  if (principal.kind === 'part') throw permissionDenied(`${describePrincipal(principal)} may not browse organizations; use an API key`);
  return principal;
}

export async function listOrganizations(store: TabularStore, authorizer: Authorizer, md: Metadata): Promise<Organization[]> {
  const key = await keyOf(authorizer, md);
  const rows = await store.query('SELECT id, name FROM organizations WHERE id = ?', [key.organizationId]);
  return rows.map((r) => ({ id: String(r.id), name: String(r.name) }));
}

export async function listLocations(store: TabularStore, authorizer: Authorizer, md: Metadata, organizationId: string): Promise<Location[]> {
  if (!organizationId) throw invalidArgument('organization_id is required');
  const key = authorizer.checkOrg(await keyOf(authorizer, md), organizationId);
  const rows = await store.query('SELECT id, name FROM locations WHERE organization_id = ? ORDER BY name, id', [organizationId]);
  const machines = await store.query('SELECT id, location_id FROM machines WHERE organization_id = ?', [organizationId]);
  // A machine-scoped key sees the location its machine is in; a location key its own location.
  return rows
    .filter((r) => {
      const locationId = String(r.id);
      if (authorizer.covers(key, { organizationId, locationId })) return true;
      return machines.some((m) => String(m.location_id) === locationId && authorizer.covers(key, { organizationId, locationId, machineId: String(m.id) }));
    })
    .map((r) => ({ id: String(r.id), name: String(r.name), organizationId }));
}

export async function listMachines(
  store: TabularStore,
  authorizer: Authorizer,
  status: PartStatusBook,
  md: Metadata,
  organizationId: string,
  locationId: string,
): Promise<Machine[]> {
  if (!organizationId) throw invalidArgument('organization_id is required');
  const key = authorizer.checkOrg(await keyOf(authorizer, md), organizationId);
  const machines = await store.query(
    `SELECT id, name, location_id FROM machines WHERE organization_id = ? ${locationId ? 'AND location_id = ?' : ''} ORDER BY name, id`,
    locationId ? [organizationId, locationId] : [organizationId],
  );
  const parts = await store.query('SELECT id, name, machine_id, main_part FROM machine_parts WHERE organization_id = ? ORDER BY main_part DESC, name, id', [
    organizationId,
  ]);
  return machines
    .filter((m) => authorizer.covers(key, { organizationId, locationId: String(m.location_id), machineId: String(m.id) }))
    .map((m) => ({
      id: String(m.id),
      name: String(m.name),
      locationId: String(m.location_id),
      parts: parts
        .filter((p) => String(p.machine_id) === String(m.id))
        .map((p): PartSummary => {
          const s = status.get(String(p.id));
          return {
            id: String(p.id),
            name: String(p.name),
            mainPart: Boolean(p.main_part),
            online: s.online,
            lastAccess: s.lastAccess,
            runtimeVersion: s.report?.runtimeVersion ?? '',
          };
        }),
    }));
}
