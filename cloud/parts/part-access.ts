// Who may do what with a part. Users (API keys): any role whose scope holds the part may read, owners
// may update. Machines: a part token may use the machine API for itself only; an API key (the form
// platform-agent writes) may read the part's config when its scope holds the part's machine. Writing
// the part's log lines and status is the machine's own act: the part token, a key scoped to exactly
// the part's machine (the machine's credentials), or an owner key whose scope holds the part (as for
// data uploads). An operator key elsewhere in the organization reads them but may not forge them.
import type { Metadata } from '@grpc/grpc-js';
import { permissionDenied } from '../../core/serving/status-error.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type KeyPrincipal, type Principal } from '../auth/principal.js';
import type { TabularStore } from '../store/tabular.js';
import { findPart, type PartRow } from './part-configs.js';

const placeOf = (part: PartRow) => ({ organizationId: part.organizationId, locationId: part.locationId, machineId: part.machineId });

export async function authorizeUser(
  store: TabularStore,
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

/**
 * `write`: the call writes the part's log lines or status (see the rules above). `speaksForPart` says
 * whether the caller may write them, so that only such calls mark the part as seen.
 */
export async function authorizeMachine(
  store: TabularStore,
  authorizer: Authorizer,
  md: Metadata,
  partId: string,
  access: 'read' | 'write' = 'read',
): Promise<{ part: PartRow; principal: Principal; speaksForPart: boolean }> {
  const principal = await authorizer.authenticate(md);
  const part = await findPart(store, partId);
  if (principal.kind === 'part') {
    if (principal.partId !== part.id)
      throw permissionDenied(`${describePrincipal(principal)} may only use the machine API for itself, not for part ${part.id}`);
    return { part, principal, speaksForPart: true };
  }
  authorizer.check(principal, placeOf(part));
  const speaksForPart = principal.role === 'owner' || (principal.scope.type === 'machine' && principal.scope.id === part.machineId);
  if (access === 'write' && !speaksForPart) {
    throw permissionDenied(
      `${describePrincipal(principal)} may not write the log lines or status of part ${part.id}: only the part itself, a key scoped to its machine, or an owner key may`,
    );
  }
  return { part, principal, speaksForPart };
}
