// The ICE servers (STUN, TURN with credentials) that the cloud's signaling hands to callers and machines,
// from the setting PLATFORM_WEBRTC_ICE_SERVERS: a JSON array of {"urls": [...], "username", "credential"}.
import type { ICEServer } from '../../gen/platform/rpc/webrtc/v1/signaling.js';

export const ICE_SERVERS_SETTING = 'PLATFORM_WEBRTC_ICE_SERVERS';

/** Parses the setting; throws an error naming the setting and the entry for anything malformed. */
export function iceServersFromEnv(env: NodeJS.ProcessEnv = process.env): ICEServer[] {
  const text = env[ICE_SERVERS_SETTING];
  if (!text) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${ICE_SERVERS_SETTING}: not JSON (${(err as Error).message}); expected [{"urls":["turn:host:3478"],"username":"...","credential":"..."}]`,
      {
        cause: err,
      },
    );
  }
  if (!Array.isArray(parsed)) throw new Error(`${ICE_SERVERS_SETTING}: expected a JSON array of ICE servers`);
  return parsed.map((entry: unknown, i) => {
    const e = entry as { urls?: unknown; username?: unknown; credential?: unknown } | null;
    const urls = typeof e?.urls === 'string' ? [e.urls] : e?.urls;
    if (!Array.isArray(urls) || urls.length === 0 || !urls.every((u) => typeof u === 'string' && /^(stun|stuns|turn|turns):/.test(u))) {
      throw new Error(`${ICE_SERVERS_SETTING}[${i}].urls: expected stun:, stuns:, turn: or turns: URLs`);
    }
    for (const key of ['username', 'credential'] as const) {
      if (e?.[key] !== undefined && typeof e[key] !== 'string') throw new Error(`${ICE_SERVERS_SETTING}[${i}].${key}: expected a string`);
    }
    return { urls: urls as string[], username: (e?.username as string | undefined) ?? '', credential: (e?.credential as string | undefined) ?? '' };
  });
}
