// The -config file of an online machine: only cloud credentials (the shape platform-agent writes),
// `{"cloud": {"id", "secret" | "api_key": {id, key}, "app_address"}}`, optionally with `network` (this
// machine's own bind address and TLS, which win over the cloud config's). A file that also holds
// resources, modules or an `agent` object is a full local config and runs offline, as before.
import type { MachineConfig } from '../shared/machine-config.js';

export interface PartCredentials {
  partId: string;
  appAddress: string;
  secret?: string;
  apiKey?: { id: string; key: string };
}

const LOCAL_KEYS = ['components', 'services', 'modules', 'agent', 'maintenance', 'log', 'module_dir'];

/** Credentials when `raw` is a credentials file (online mode); undefined for a full local config. */
export function onlineCredentials(raw: unknown, config: MachineConfig): PartCredentials | undefined {
  if (!config.cloud || raw === null || typeof raw !== 'object') return undefined;
  if (LOCAL_KEYS.some((k) => k in (raw as Record<string, unknown>))) return undefined;
  const c = config.cloud;
  return { partId: c.id, appAddress: c.app_address ?? '', secret: c.secret, apiKey: c.api_key };
}

export class InsecureCredentialsError extends Error {
  constructor(readonly host: string) {
    super(
      `refusing to send the machine credentials in plaintext to ${host}, which is not a loopback address: use an https:// app_address, or pass -allow-insecure-creds to allow it`,
    );
    this.name = 'InsecureCredentialsError';
  }
}

export interface CloudTarget {
  /** host:port for grpc-js. */
  target: string;
  tls: boolean;
  host: string;
}

/** "https://host:port" (TLS), "http://host:port" or "host:port" (plaintext). */
export function cloudTarget(appAddress: string): CloudTarget {
  if (!appAddress) throw new Error('cloud.app_address is required to reach the cloud');
  const m = /^(https?):\/\/([^/]+)\/?$/i.exec(appAddress);
  const tls = m ? m[1].toLowerCase() === 'https' : false;
  const hostPort = m ? m[2] : appAddress;
  const target = /:\d+$/.test(hostPort) ? hostPort : `${hostPort}:${tls ? 443 : 80}`;
  const host = target.slice(0, target.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return { target, tls, host };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host) || /^::ffff:127\./.test(host);
}

/** Throws InsecureCredentialsError when credentials would travel in plaintext off this machine. */
export function checkCredentialTransport(target: CloudTarget, allowInsecure: boolean): void {
  if (!target.tls && !isLoopback(target.host) && !allowInsecure) throw new InsecureCredentialsError(target.host);
}
