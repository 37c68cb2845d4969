// Which names a web port answers to. A page on the web without any login can make a browser send
// requests to a name it controls that resolves to this machine (DNS rebinding): the browser then treats
// the web port as the attacker's own origin, and its calls (SaveConfig, StopAll) as same-origin. Such a
// request names the attacker's host in Host (and Origin), so only requests naming this port's own names
// are served (issue 27, finding 10). Pages also may not be framed by any other page (clickjacking).
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { echo } from '../bounded-text.js';
import { answerRefusal } from './request-body.js';
import type { RefusalPacer } from '../refusal-pacer.js';

/** Extra names (comma-separated) every web port answers to; `*` turns the check off (behind a proxy that checks). */
export const ALLOWED_HOSTS_VARIABLE = 'PLATFORM_WEB_ALLOWED_HOSTS';

/** Sent with every response of a web port: no page may frame it, no type is guessed. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

export class HostGuard {
  private readonly names: ReadonlySet<string>;
  private readonly any: boolean;

  /**
   * `names`: the port's configured names (its bind host, the gRPC bind host, configured extras). Always
   * allowed besides: localhost and *.localhost, any IP address (a rebinding attack needs a name), this
   * machine's host name and its mDNS name (<hostname>.local), and PLATFORM_WEB_ALLOWED_HOSTS.
   */
  constructor(names: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    const extra = (env[ALLOWED_HOSTS_VARIABLE] ?? '').split(',');
    const host = hostname();
    const all = [...names, ...extra, host, `${host}.local`].map(normalize).filter((n) => n !== '');
    this.any = all.includes('*');
    this.names = new Set(all);
  }

  /** True when `name` (a host name or address, without port) is one this port answers to. */
  allows(name: string): boolean {
    const n = normalize(name);
    if (this.any) return true;
    if (n === 'localhost' || n.endsWith('.localhost')) return true;
    if (isIP(n.replace(/^\[|\]$/g, '')) !== 0) return true;
    return this.names.has(n);
  }

  /** Why the request is refused (naming the header, the value and the fix), or undefined when it is allowed. */
  refusal(req: IncomingMessage): string | undefined {
    const host = req.headers.host;
    if (!host) return 'the request has no Host header; this web port answers only requests that name it';
    const name = hostOf(host);
    if (name === undefined || !this.allows(name)) {
      return `Host ${JSON.stringify(echo(host))} is not a name of this web port; add the name to ${ALLOWED_HOSTS_VARIABLE} (or the port's allowed hosts setting) if it is really this machine`;
    }
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    const originHost = originHostOf(origin);
    if (originHost === undefined || !this.allows(originHost)) {
      return `Origin ${JSON.stringify(echo(origin))} is not a page of this web port; calls are accepted from its own page (or from names in ${ALLOWED_HOSTS_VARIABLE})`;
    }
    return undefined;
  }
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/** The host of a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`), or undefined when malformed. */
export function hostOf(header: string): string | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]\s/@]+)(?::\d{1,5})?$/.exec(header.trim());
  return m?.[1];
}

/** The host of an Origin header (`scheme://host[:port]`), or undefined (`null`, malformed, not http(s)). */
export function originHostOf(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.hostname;
  } catch {
    return undefined;
  }
}

/** 403 with the reason, paced per address by `pacer`; a refused request's body is not read (see answerRefusal). */
export function refuseForbidden(req: IncomingMessage, res: ServerResponse, reason: string, pacer?: RefusalPacer): void {
  answerRefusal(req, res, () => res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(`${reason}\n`), pacer);
}
