// platform.rpc.v1.AuthService: an API key id and key for an access token.
import * as auth from '../../../gen/platform/rpc/v1/auth.js';
import { unary } from '../../shared/grpc-web-client.js';

export async function authenticateApiKey(keyId: string, key: string): Promise<auth.AuthenticateResponse> {
  return unary('/platform.rpc.v1.AuthService/Authenticate', auth.AuthenticateRequest, auth.AuthenticateResponse, {
    entity: keyId,
    credentials: { type: 'api-key', payload: key },
  });
}
