// The Authorizer turns the bearer token of a call into a Principal and checks it against the place of
// the data it touches. Every cloud handler (data, datasync, dataset, ML training, agent) goes through it.
//
// Rules (FACTS.md "Permissions"): any role in an org, location or machine may read the data in that
// scope; writes (tag, delete, annotate, datasets, training) need the owner role; some calls need an
// organization-level key. Machine parts may only upload data for themselves.
import type { Metadata } from '@grpc/grpc-js';
import { permissionDenied, unauthenticated } from '../../core/shared/status-error.js';
import type { Store } from '../store/store.js';
import { describePrincipal, type KeyPrincipal, type PartPrincipal, type Place, type Principal, type Role, type ScopeType } from './principal.js';
import { TokenError, type TokenSigner } from './token.js';

export interface Need {
  /** 'owner' requires the owner role; default: any role. */
  role?: Role;
  /** 'organization' requires a key scoped to the whole organization. */
  level?: 'organization';
}

export class Authorizer {
  // Keys and parts never change once created, so their lookups are cached for the process' life.
  private readonly keys = new Map<string, KeyPrincipal>();
  private readonly parts = new Map<string, PartPrincipal>();

  constructor(
    private readonly store: Store,
    readonly tokens: TokenSigner,
  ) {}

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
    const principal = claims.kind === 'api-key' ? await this.keyPrincipal(claims.sub) : await this.partPrincipal(claims.sub);
    if (!principal) throw unauthenticated(`the ${claims.kind} ${claims.sub} named by the access token no longer exists`);
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

  async keyPrincipal(keyId: string): Promise<KeyPrincipal | undefined> {
    const cached = this.keys.get(keyId);
    if (cached) return cached;
    const rows = await this.store.query('SELECT organization_id, scope_type, scope_id, role FROM api_keys WHERE id = ?', [keyId]);
    if (rows.length === 0) return undefined;
    const row = rows[0];
    const principal: KeyPrincipal = {
      kind: 'api-key',
      keyId,
      organizationId: String(row.organization_id),
      scope: { type: row.scope_type as ScopeType, id: String(row.scope_id) },
      role: row.role as Role,
    };
    this.keys.set(keyId, principal);
    return principal;
  }

  async partPrincipal(partId: string): Promise<PartPrincipal | undefined> {
    const cached = this.parts.get(partId);
    if (cached) return cached;
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
