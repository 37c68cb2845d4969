// Who may do what with a part. Users (API keys): any role whose scope holds the part may read, owners
// may update. Machines: a part token may use the machine API for itself only; an API key (the form
// platform-agent writes) may when its scope holds the part's machine.
import type { Metadata } from '@grpc/grpc-js';
import { permissionDenied } from '../../core/shared/status-error.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type KeyPrincipal, type Principal } from '../auth/principal.js';
import type { Store } from '../store/store.js';
import { findPart, type PartRow } from './part-configs.js';

const placeOf = (part: PartRow) => ({ organizationId: part.organizationId, locationId: part.locationId, machineId: part.machineId });

export async function authorizeUser(
  store: Store,
  authorizer: Authorizer,
  md: Metadata,
  partId: string,
  role?: 'owner',
): Promise<{ part: PartRow; principal: KeyPrincipal }> {
  const principal = await authorizer.authenticate(md);
  const part = await findPart(store, partId);
  authorizer.check(principal, placeOf(part), role ? { role } : {});
  return { part, principal: principal as KeyPrincipal };
}

export async function authorizeMachine(store: Store, authorizer: Authorizer, md: Metadata, partId: string): Promise<{ part: PartRow; principal: Principal }> {
  const principal = await authorizer.authenticate(md);
  const part = await findPart(store, partId);
  if (principal.kind === 'part') {
    if (principal.partId !== part.id)
      throw permissionDenied(`${describePrincipal(principal)} may only use the machine API for itself, not for part ${part.id}`);
  } else {
    authorizer.check(principal, placeOf(part));
  }
  return { part, principal };
}
