// Who is calling: an API key (scoped to an organization, location or machine, with a role) or a machine
// part (which may only upload its own data).
export type Role = 'owner' | 'operator';
export type ScopeType = 'organization' | 'location' | 'machine';

export interface KeyPrincipal {
  kind: 'api-key';
  keyId: string;
  organizationId: string;
  scope: { type: ScopeType; id: string };
  role: Role;
}

export interface PartPrincipal {
  kind: 'part';
  partId: string;
  machineId: string;
  locationId: string;
  organizationId: string;
}

export type Principal = KeyPrincipal | PartPrincipal;

/** Where a piece of data or an object lives, for scope checks. Omitted levels are not checked. */
export interface Place {
  organizationId: string;
  locationId?: string;
  /** The machine (robot) id. */
  machineId?: string;
}

export function describePrincipal(p: Principal): string {
  return p.kind === 'part' ? `machine part ${p.partId}` : `API key ${p.keyId} (${p.role} of ${p.scope.type} ${p.scope.id})`;
}
