// The Authorizer turns the bearer token of a call into a Principal and checks it against the place of
// the data it touches. Every cloud handler (data, datasync, dataset, ML training, agent) goes through it.
//
// Rules (FACTS.md "Permissions"): any role in an org, location or machine may read the data in that
// scope; writes (tag, delete, annotate, datasets, training) need the owner role; some calls need an
// organization-level key. Machine parts may only upload data for themselves.
import type { Metadata } from '@grpc/grpc-js';
import { permissionDenied, unauthenticated } from '../../core/serving/status-error.js';
import { storeChannels } from '../store/pg-notify.js';
import type { TabularStore } from '../store/tabular.js';
import { describePrincipal, type KeyPrincipal, type PartPrincipal, type Place, type Principal, type Role, type ScopeType } from './principal.js';
import { TokenError, type TokenSigner } from './token.js';

export interface Need {
  /** 'owner' requires the owner role; default: any role. */
  role?: Role;
  /** 'organization' requires a key scoped to the whole organization. */
  level?: 'organization';
}

/**
 * How stale a cached API key may be: revocation and rotation take effect within this time, in every
 * process, even when the notification below is lost.
 */
export const KEY_FRESHNESS_MS = 500;

/** The channel on which a revoked or rotated key's id is sent (cloud/store/pg-notify.ts). */
export const KEY_CHANNEL = 'platform_api_key';

/**
 * Tells the Authorizers of every process of the cloud that keyId changed (revoked, rotated), so they
 * drop their cached copy now rather than after KEY_FRESHNESS_MS. Call after the change committed;
 * never rejects (the change is made; the cache's age bounds what a lost notification costs).
 */
export async function publishKeyChange(store: TabularStore, keyId: string): Promise<void> {
  await storeChannels(store)
    .publish(KEY_CHANNEL, keyId)
    .catch(() => undefined);
}

export class Authorizer {
  // Parts never change once created, so their lookups are cached for the process' life. Keys can be
  // revoked or rotated (by an admin command, possibly in another process), so a key's cached copy is
  // dropped when publishKeyChange says so (from any process of the cloud), and re-read anyway once it
  // is older than KEY_FRESHNESS_MS.
  private readonly keys = new Map<string, { principal: KeyPrincipal | undefined; rotatedAtS: number; readAt: number }>();
  private readonly parts = new Map<string, PartPrincipal>();
  // The reads under way, shared by every call that needs the same row meanwhile. Without them, 2000
  // upload streams opened at once by one machine part made 2000 identical reads before the first
  // answer was cached, and every other tenant's query waited behind them for the store's readers
  // (7 s; issue 27, finding 4).
  private readonly keyReads = new Map<string, Promise<{ principal: KeyPrincipal | undefined; rotatedAtS: number; readAt: number }>>();
  private readonly partReads = new Map<string, Promise<PartPrincipal | undefined>>();

  constructor(
    private readonly store: TabularStore,
    readonly tokens: TokenSigner,
    /** How stale a cached key may be (tests set it long, to see the notifications alone at work). */
    private readonly keyFreshnessMs = KEY_FRESHNESS_MS,
  ) {
    const channels = storeChannels(store);
    channels.subscribe(KEY_CHANNEL, (keyId) => this.forgetKey(keyId));
    // Notifications were missed: any key may have changed meanwhile.
    channels.onResync(() => {
      this.keyChanges++;
      this.keys.clear();
      this.keyReads.clear();
    });
  }

  /** Counts the forgets: a read that began before one may have read the old row, and is not cached. */
  private keyChanges = 0;

  /** Drops the cached copy of a key (and any read of it under way), so the next call reads it afresh. */
  private forgetKey(keyId: string): void {
    this.keyChanges++;
    this.keys.delete(keyId);
    this.keyReads.delete(keyId);
  }

  /** Verifies `authorization: Bearer <token>`; throws UNAUTHENTICATED when it is missing or invalid. */
  async authenticate(metadata: Metadata): Promise<Principal> {
    const header = metadata.get('authorization')[0];
    if (typeof header !== 'string' || header.length === 0) {
      throw unauthenticated('missing authorization metadata: expected "authorization: Bearer <access token>" from AuthService/Authenticate');
    }
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthenticated('authorization metadata must have the form "Bearer <access token>"');
    let claims;
    try {
      claims = this.tokens.verify(match[1]);
    } catch (err) {
      if (err instanceof TokenError) throw unauthenticated(err.message);
      throw err;
    }
    const principal = claims.kind === 'api-key' ? await this.keyPrincipal(claims.sub, claims.iat) : await this.partPrincipal(claims.sub);
    if (!principal) throw unauthenticated(`the ${claims.kind} ${claims.sub} named by the access token no longer exists or was revoked`);
    return principal;
  }

  /**
   * Authenticates the call and checks that its key may act on `place` with `need`. Returns the key's
   * principal. Machine-part tokens are refused: use authorizeUpload for uploads.
   */
  async authorize(metadata: Metadata, place: Place, need: Need = {}): Promise<KeyPrincipal> {
    const principal = await this.authenticate(metadata);
    this.check(principal, place, need);
    return principal as KeyPrincipal;
  }

  /** Throws PERMISSION_DENIED unless principal may act on place with need. */
  check(principal: Principal, place: Place, need: Need = {}): void {
    if (principal.kind === 'part') {
      throw permissionDenied(`${describePrincipal(principal)} may only upload its own data; use an API key`);
    }
    this.checkOrg(principal, place.organizationId, need);
    if (!this.covers(principal, place)) {
      throw permissionDenied(`${describePrincipal(principal)} has no access to that data (${placeText(place)})`);
    }
  }

  /** Checks organization, role and level only (for org-wide calls whose rows are scoped afterwards). */
  checkOrg(principal: Principal, organizationId: string, need: Need = {}): KeyPrincipal {
    if (principal.kind === 'part') {
      throw permissionDenied(`${describePrincipal(principal)} may only upload its own data; use an API key`);
    }
    if (principal.organizationId !== organizationId) {
      throw permissionDenied(`${describePrincipal(principal)} belongs to another organization than ${organizationId}`);
    }
    if (need.role === 'owner' && principal.role !== 'owner') {
      throw permissionDenied(`${describePrincipal(principal)} is an operator; this call needs the owner role`);
    }
    if (need.level === 'organization' && principal.scope.type !== 'organization') {
      throw permissionDenied(`${describePrincipal(principal)} is not an organization-level key; this call needs one`);
    }
    return principal;
  }

  /** Whether a key's scope includes a place (organization, then location or machine). */
  covers(principal: KeyPrincipal, place: Place): boolean {
    if (principal.organizationId !== place.organizationId) return false;
    switch (principal.scope.type) {
      case 'organization':
        return true;
      case 'location':
        return place.locationId === principal.scope.id;
      case 'machine':
        return place.machineId === principal.scope.id;
    }
  }

  /** Uploads: a part may upload for itself; an owner key may upload for any part in its scope. */
  checkUpload(principal: Principal, part: PartPrincipal): void {
    if (principal.kind === 'part') {
      if (principal.partId !== part.partId) {
        throw permissionDenied(`${describePrincipal(principal)} may not upload data for part ${part.partId}`);
      }
      return;
    }
    this.check(principal, { organizationId: part.organizationId, locationId: part.locationId, machineId: part.machineId }, { role: 'owner' });
  }

  /**
   * The principal of an active key; undefined when it does not exist or is revoked. With `issuedAtS`
   * (a token's iat), a token issued before the key's last rotation is refused as well.
   */
  async keyPrincipal(keyId: string, issuedAtS?: number): Promise<KeyPrincipal | undefined> {
    let entry = this.keys.get(keyId);
    if (!entry || Date.now() - entry.readAt >= this.keyFreshnessMs) {
      entry = await this.once(this.keyReads, keyId, async () => {
        const changes = this.keyChanges;
        const read = await this.readKey(keyId);
        if (changes === this.keyChanges) this.keys.set(keyId, read);
        return read;
      });
    }
    if (issuedAtS !== undefined && issuedAtS < entry.rotatedAtS) {
      throw unauthenticated(`access token of API key ${keyId} was issued before the key was rotated; authenticate with the new key`);
    }
    return entry.principal;
  }

  private async readKey(keyId: string) {
    const readAt = Date.now();
    const rows = await this.store.query('SELECT organization_id, scope_type, scope_id, role, revoked_at, rotated_at FROM api_keys WHERE id = ?', [keyId]);
    const row = rows[0];
    if (!row || row.revoked_at != null) return { principal: undefined, rotatedAtS: 0, readAt };
    const principal: KeyPrincipal = {
      kind: 'api-key',
      keyId,
      organizationId: String(row.organization_id),
      scope: { type: row.scope_type as ScopeType, id: String(row.scope_id) },
      role: row.role as Role,
    };
    const rotatedAtS = row.rotated_at instanceof Date ? Math.floor(row.rotated_at.getTime() / 1000) : 0;
    return { principal, rotatedAtS, readAt };
  }

  /** Runs read for `id` unless a read of it is under way, whose answer it then shares. */
  private async once<T>(reads: Map<string, Promise<T>>, id: string, read: () => Promise<T>): Promise<T> {
    let pending = reads.get(id);
    if (!pending) {
      pending = read().finally(() => reads.delete(id));
      reads.set(id, pending);
    }
    return pending;
  }

  async partPrincipal(partId: string): Promise<PartPrincipal | undefined> {
    return this.parts.get(partId) ?? this.once(this.partReads, partId, () => this.readPart(partId));
  }

  private async readPart(partId: string): Promise<PartPrincipal | undefined> {
    const rows = await this.store.query('SELECT machine_id, location_id, organization_id FROM machine_parts WHERE id = ?', [partId]);
    if (rows.length === 0) return undefined;
    const principal: PartPrincipal = {
      kind: 'part',
      partId,
      machineId: String(rows[0].machine_id),
      locationId: String(rows[0].location_id),
      organizationId: String(rows[0].organization_id),
    };
    this.parts.set(partId, principal);
    return principal;
  }
}

function placeText(place: Place): string {
  return [`organization ${place.organizationId}`, place.locationId && `location ${place.locationId}`, place.machineId && `machine ${place.machineId}`]
    .filter(Boolean)
    .join(', ');
}
