// The key signed in to the cloud's page: its id, key, token and organization, kept only in this tab's
// sessionStorage (gone when the tab closes; never localStorage, never a cookie). Shared with the control
// page that the cloud serves for a machine (web/runtime/through-cloud.ts): same origin, same tab storage,
// so the control page signals to the machine with the same key and never asks for it again.
import * as auth from '../../gen/platform/rpc/v1/auth.js';
import { grpcWeb } from './grpc-web-client.js';

export interface Session {
  keyId: string;
  key: string;
  token: string;
  orgId: string;
}

const STORAGE_KEY = 'platform-cloud.session';

export function loadSession(): Session | undefined {
  try {
    const text = sessionStorage.getItem(STORAGE_KEY);
    return text ? (JSON.parse(text) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** platform.rpc.v1.AuthService/Authenticate: an API key id and key for an access token (always gRPC-Web to the cloud). */
export function authenticateApiKey(keyId: string, key: string): Promise<auth.AuthenticateResponse> {
  return grpcWeb.unary(
    '/platform.rpc.v1.AuthService/Authenticate',
    auth.AuthenticateRequest,
    auth.AuthenticateResponse,
    { entity: keyId, credentials: { type: 'api-key', payload: key } },
    {},
  );
}

/** A new token for the stored key (its previous one expired); the organization stays. */
export async function renewSession(session: Session): Promise<Session> {
  const reply = await authenticateApiKey(session.keyId, session.key);
  const renewed = { ...session, token: reply.accessToken };
  saveSession(renewed);
  return renewed;
}
