// Who may use the ML training API: API keys with the owner role on a whole organization (SPEC
// "Authentication" 3). The gRPC service depends on this narrow interface; the cloud's Authorizer
// implements it below.
import type { Metadata } from '@grpc/grpc-js';
import type { Authorizer } from '../auth/authorizer.js';

export interface TrainingAuth {
  /**
   * Checks the call's credentials: an organization-level owner key of `organizationId` (or, without
   * it, of the caller's own organization). Returns the caller's organization id.
   */
  requireOwner(metadata: Metadata, organizationId?: string): Promise<string>;
}

export function authorizerTrainingAuth(authorizer: Authorizer): TrainingAuth {
  return {
    async requireOwner(metadata, organizationId) {
      const principal = await authorizer.authenticate(metadata);
      const org = organizationId ?? principal.organizationId;
      return authorizer.checkOrg(principal, org, { role: 'owner', level: 'organization' }).organizationId;
    },
  };
}
