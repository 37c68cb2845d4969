// The signed-in key's organization (AuthService/Authenticate itself is in web/shared/cloud-session.ts).
import * as app from '../../../gen/platform/app/v1/robot_part.js';
import { unary } from '../../shared/grpc-web-client.js';

/** The organization of a key (a key belongs to exactly one), from AppService/ListOrganizations with its token. */
export async function organizationOfKey(token: string): Promise<string> {
  const reply = await unary(
    '/platform.app.v1.AppService/ListOrganizations',
    app.ListOrganizationsRequest,
    app.ListOrganizationsResponse,
    {},
    { authorization: `Bearer ${token}` },
  );
  const id = reply.organizations[0]?.id;
  if (!id) throw new Error('ListOrganizations: this key reaches no organization');
  return id;
}
