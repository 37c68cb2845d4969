// `platform-cloud key list|revoke|rotate`: the life of an API key after `key create`. Revoking marks the
// row (history stays); rotating replaces the stored hash and refuses tokens issued before the rotation.
// Both tell every process's Authorizer at once (publishKeyChange), and an Authorizer re-reads a key at
// most KEY_FRESHNESS_MS after it last did anyway, so both take effect within a second for tokens already
// handed out, on every process of the cloud.
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import { publishKeyChange } from '../auth/authorizer.js';
import { hashSecret, newSecret } from '../auth/secret-hash.js';
import type { TabularStore } from '../store/tabular.js';

export interface KeyListing {
  id: string;
  organization_id: string;
  scope: string;
  role: string;
  time_created: string;
  status: 'active' | 'revoked';
  revoked_at: string | null;
  rotated_at: string | null;
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v == null ? null : String(v));

function requireId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidArgument(`${field} is required and must be a non-empty string`);
  return value;
}

export async function listKeys(store: TabularStore, args: { org?: unknown }): Promise<KeyListing[]> {
  const org = requireId(args.org, 'org');
  const rows = await store.query(
    'SELECT id, organization_id, scope_type, scope_id, role, time_created, revoked_at, rotated_at FROM api_keys WHERE organization_id = ? ORDER BY time_created, id',
    [org],
  );
  return rows.map((r) => ({
    id: String(r.id),
    organization_id: String(r.organization_id),
    scope: `${String(r.scope_type)}:${String(r.scope_id)}`,
    role: String(r.role),
    time_created: iso(r.time_created)!,
    status: r.revoked_at == null ? 'active' : 'revoked',
    revoked_at: iso(r.revoked_at),
    rotated_at: iso(r.rotated_at),
  }));
}

async function activeKey(store: TabularStore, id: string): Promise<void> {
  const rows = await store.query('SELECT revoked_at FROM api_keys WHERE id = ?', [id]);
  if (rows.length === 0) throw notFound(`API key ${id} does not exist`);
  if (rows[0].revoked_at != null) throw invalidArgument(`API key ${id} is already revoked`);
}

export async function revokeKey(store: TabularStore, args: { id?: unknown }): Promise<{ id: string; revoked: true }> {
  const id = requireId(args.id, 'id');
  await activeKey(store, id);
  await store.execute('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [new Date(), id]);
  await publishKeyChange(store, id);
  return { id, revoked: true };
}

/** Replaces the key's secret; the new one is returned once and stored only as a hash. */
export async function rotateKey(store: TabularStore, args: { id?: unknown }): Promise<{ id: string; key: string }> {
  const id = requireId(args.id, 'id');
  await activeKey(store, id);
  const key = newSecret();
  await store.execute('UPDATE api_keys SET key_hash = ?, rotated_at = ? WHERE id = ?', [await hashSecret(key), new Date(), id]);
  await publishKeyChange(store, id);
  return { id, key };
}
