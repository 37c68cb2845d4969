// Signing in to the cloud's page. The session itself (sessionStorage, renewal) is in
// web/shared/cloud-session.ts, which the control page the cloud serves for a machine reads too.
import { authenticateApiKey, saveSession, type Session } from '../shared/cloud-session.js';
import { organizationOfKey } from './api/auth.js';

export { clearSession, loadSession, renewSession, type Session } from '../shared/cloud-session.js';

/**
 * Authenticates the key (AuthService/Authenticate), finds its organization (a key belongs to exactly one,
 * so the form does not ask for it) and stores the new session.
 */
export async function signIn(keyId: string, key: string): Promise<Session> {
  const reply = await authenticateApiKey(keyId, key);
  const session = { keyId, key, token: reply.accessToken, orgId: await organizationOfKey(reply.accessToken) };
  saveSession(session);
  return session;
}
