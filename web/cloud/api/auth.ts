// platform.rpc.v1.AuthService: an API key id and key for an access token.
import * as app from '../../../gen/platform/app/v1/robot_part.js';
import * as auth from '../../../gen/platform/rpc/v1/auth.js';
import { unary } from '../../shared/grpc-web-client.js';

export async function authenticateApiKey(keyId: string, key: string): Promise<auth.AuthenticateResponse> {
  return unary('/platform.rpc.v1.AuthService/Authenticate', auth.AuthenticateRequest, auth.AuthenticateResponse, {
    entity: keyId,
    credentials: { type: 'api-key', payload: key },
  });
}

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
