// -webprofile: GET /debug/profile?seconds=N on the web port returns a V8 CPU profile of the runtime's main
// thread over the next N seconds, as a .cpuprofile file (the JSON Chrome DevTools and VS Code load).
import { Session, type Profiler } from 'node:inspector';
import { ProfileRequestError } from '../errors.js';
export { ProfileRequestError };

/** Longest profile one request may ask for: the request holds its connection open meanwhile. */
export const MAX_PROFILE_SECONDS = 300;

/** Reads `seconds` from the query: 1 to MAX_PROFILE_SECONDS, default 10. */
export function profileSeconds(query: URLSearchParams): number {
  const raw = query.get('seconds');
  if (raw === null) return 10;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
    throw new ProfileRequestError(`seconds: must be a number above 0 and at most ${MAX_PROFILE_SECONDS}, got ${JSON.stringify(raw)}`);
  }
  return seconds;
}

function post<T>(session: Session, method: string): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result as T))));
}

/** Profiles the calling thread for the given time. Its own inspector session, so -cpuprofile can run too. */
export async function captureProfile(seconds: number): Promise<Profiler.Profile> {
  const session = new Session();
  session.connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await post<{ profile: Profiler.Profile }>(session, 'Profiler.stop');
    return profile;
  } finally {
    session.disconnect();
  }
}
