// Tenancy: organizations, locations, machines (with their main part) and API keys. These are the admin
// actions behind `platform-cloud org|location|machine|key create`; they run inside the server (via the
// admin channel) or against a directly opened store, with the same code.
import { randomUUID } from 'node:crypto';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { hashSecret, newSecret } from '../auth/secret-hash.js';
import type { Role, ScopeType } from '../auth/principal.js';
import type { TabularStore } from '../store/tabular.js';

const now = () => new Date();

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidArgument(`${field} is required and must be a non-empty string`);
  return value;
}

async function requireRow(store: TabularStore, table: string, id: string, what: string, orgId?: string): Promise<Record<string, unknown>> {
  const rows = await store.query(`SELECT * FROM ${table} WHERE id = ?`, [id]);
  if (rows.length === 0) throw notFound(`${what} ${id} does not exist`);
  if (orgId !== undefined && rows[0].organization_id !== orgId) throw invalidArgument(`${what} ${id} does not belong to organization ${orgId}`);
  return rows[0];
}

export async function createOrganization(store: TabularStore, args: { name?: unknown }): Promise<{ id: string }> {
  const name = requireText(args.name, 'name');
  const id = randomUUID();
  await store.execute('INSERT INTO organizations VALUES (?, ?, ?)', [id, name, now()]);
  return { id };
}

export async function createLocation(store: TabularStore, args: { org?: unknown; name?: unknown }): Promise<{ id: string }> {
  const org = requireText(args.org, 'org');
  const name = requireText(args.name, 'name');
  await requireRow(store, 'organizations', org, 'organization');
  const id = randomUUID();
  await store.execute('INSERT INTO locations VALUES (?, ?, ?, ?)', [id, org, name, now()]);
  return { id };
}

/** A machine lives in a location; without --location it goes to the org's first one ("Default", created on demand). */
async function locationFor(store: TabularStore, org: string, location: unknown): Promise<string> {
  if (location !== undefined && location !== null && location !== '') {
    const id = requireText(location, 'location');
    await requireRow(store, 'locations', id, 'location', org);
    return id;
  }
  const rows = await store.query('SELECT id FROM locations WHERE organization_id = ? ORDER BY time_created, id LIMIT 1', [org]);
  if (rows.length > 0) return String(rows[0].id);
  return (await createLocation(store, { org, name: 'Default' })).id;
}

export async function createMachine(
  store: TabularStore,
  args: { org?: unknown; name?: unknown; location?: unknown },
): Promise<{ machine_id: string; part_id: string; part_secret: string; location_id: string }> {
  const org = requireText(args.org, 'org');
  const name = requireText(args.name, 'name');
  await requireRow(store, 'organizations', org, 'organization');
  const locationId = await locationFor(store, org, args.location);
  const machineId = randomUUID();
  const partId = randomUUID();
  const partSecret = newSecret();
  const secretHash = await hashSecret(partSecret);
  await store.transact(async (tx) => {
    await tx.execute('INSERT INTO machines VALUES (?, ?, ?, ?, ?)', [machineId, org, locationId, name, now()]);
    await tx.execute('INSERT INTO machine_parts VALUES (?, ?, ?, ?, ?, true, ?, ?)', [partId, machineId, org, locationId, `${name}-main`, secretHash, now()]);
  });
  return { machine_id: machineId, part_id: partId, part_secret: partSecret, location_id: locationId };
}

export async function createKey(
  store: TabularStore,
  args: { org?: unknown; location?: unknown; machine?: unknown; role?: unknown },
): Promise<{ id: string; key: string }> {
  const org = requireText(args.org, 'org');
  await requireRow(store, 'organizations', org, 'organization');
  if (args.role !== 'owner' && args.role !== 'operator') throw invalidArgument(`role must be "owner" or "operator", got "${String(args.role)}"`);
  const role: Role = args.role;
  const hasLocation = args.location !== undefined && args.location !== '';
  const hasMachine = args.machine !== undefined && args.machine !== '';
  if (hasLocation && hasMachine) throw invalidArgument('give at most one of location and machine: a key has one scope');
  let scope: { type: ScopeType; id: string } = { type: 'organization', id: org };
  if (hasLocation) {
    const id = requireText(args.location, 'location');
    await requireRow(store, 'locations', id, 'location', org);
    scope = { type: 'location', id };
  } else if (hasMachine) {
    const id = requireText(args.machine, 'machine');
    await requireRow(store, 'machines', id, 'machine', org);
    scope = { type: 'machine', id };
  }
  const id = randomUUID();
  const key = newSecret();
  await store.execute('INSERT INTO api_keys (id, organization_id, scope_type, scope_id, role, key_hash, time_created) VALUES (?, ?, ?, ?, ?, ?, ?)', [
    id,
    org,
    scope.type,
    scope.id,
    role,
    await hashSecret(key),
    now(),
  ]);
  return { id, key };
}

export async function listOrganizations(store: TabularStore): Promise<{ id: string; name: string }[]> {
  const rows = await store.query('SELECT id, name FROM organizations ORDER BY time_created, id');
  return rows.map((r) => ({ id: String(r.id), name: String(r.name) }));
}
