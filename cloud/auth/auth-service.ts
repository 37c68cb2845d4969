// platform.rpc.v1.AuthService: trades an API key (or a part secret) for a signed, expiring access token.
import { AuthServiceService, type AuthServiceServer, type AuthenticateRequest, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import type { Server } from '@grpc/grpc-js';
import { invalidArgument, unauthenticated } from '../../core/shared/status-error.js';
import type { Store } from '../store/store.js';
import { unary } from '../server/handlers.js';
import { verifySecret } from './secret-hash.js';
import type { TokenSigner } from './token.js';

export const credentialTypes = { apiKey: 'api-key', partSecret: 'robot-secret' } as const;

export async function authenticate(store: Store, tokens: TokenSigner, request: AuthenticateRequest): Promise<AuthenticateResponse> {
  const entity = request.entity;
  const type = request.credentials?.type ?? '';
  const payload = request.credentials?.payload ?? '';
  if (!entity) throw invalidArgument('entity is required: the API key id (or the machine part id)');
  if (type !== credentialTypes.apiKey && type !== credentialTypes.partSecret) {
    throw invalidArgument(`credentials.type must be "${credentialTypes.apiKey}" or "${credentialTypes.partSecret}", got "${type}"`);
  }
  if (!payload) throw invalidArgument('credentials.payload is required: the API key (or part secret)');
  const table = type === credentialTypes.apiKey ? 'SELECT key_hash AS h FROM api_keys WHERE id = ?' : 'SELECT secret_hash AS h FROM machine_parts WHERE id = ?';
  const rows = await store.query(table, [entity]);
  // The same answer for an unknown entity and a wrong secret, so callers cannot probe for ids.
  if (rows.length === 0 || !(await verifySecret(payload, String(rows[0].h)))) {
    throw unauthenticated(`invalid credentials for entity ${entity}`);
  }
  const kind = type === credentialTypes.apiKey ? 'api-key' : 'part';
  return { accessToken: tokens.sign(entity, kind), expiresInSeconds: tokens.ttlSeconds };
}

export function addAuthService(server: Server, store: Store, tokens: TokenSigner): void {
  const impl: AuthServiceServer = { authenticate: unary((request: AuthenticateRequest) => authenticate(store, tokens, request)) };
  server.addService(AuthServiceService, impl);
}
