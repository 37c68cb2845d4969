// The signed-in key: its id, key, token and organization, kept only in this tab's sessionStorage (gone
// when the tab closes; never localStorage, never a cookie).
import { authenticateApiKey, organizationOfKey } from './api/auth.js';

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

/** A new token for the stored key (its previous one expired); the organization stays. */
export async function renewSession(session: Session): Promise<Session> {
  const reply = await authenticateApiKey(session.keyId, session.key);
  const renewed = { ...session, token: reply.accessToken };
  saveSession(renewed);
  return renewed;
}
