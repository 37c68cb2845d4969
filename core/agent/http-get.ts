// GET over node:http/https with redirects. Not fetch(): Node's fetch parses HTTP in WebAssembly, which
// the agent's service flags (--lite-mode, see service-install.ts) switch off; node:http uses the
// native parser and loads far less code.
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';

const MAX_REDIRECTS = 5;
/** A download that sends nothing for this long is abandoned (and resumed at the next check). */
export const IDLE_TIMEOUT_MS = 60_000;

export function getUrl(url: string, headers: Record<string, string>, redirects = MAX_REDIRECTS): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${url}`));
      return;
    }
    const get = parsed.protocol === 'https:' ? httpsGet : parsed.protocol === 'http:' ? httpGet : undefined;
    if (!get) {
      reject(new Error(`unsupported protocol ${parsed.protocol}`));
      return;
    }
    const req = get(parsed, { headers }, (res) => {
      const status = res.statusCode ?? 0;
      if ([301, 302, 303, 307, 308].includes(status) && res.headers.location) {
        res.resume();
        if (redirects <= 0) {
          reject(new Error(`too many redirects from ${url}`));
          return;
        }
        resolve(getUrl(new URL(res.headers.location, parsed).toString(), headers, redirects - 1));
        return;
      }
      res.setTimeout(IDLE_TIMEOUT_MS, () => res.destroy(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)));
      resolve(res);
    });
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error(`no answer for ${IDLE_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
  });
}
