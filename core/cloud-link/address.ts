// Where the machine's cloud is and whether the part's credentials may travel there. The one parser of
// `cloud.app_address` and the plaintext rule (SPEC: `-allow-insecure-creds`): every link to the cloud goes
// through cloud-link.ts, which checks this before any channel exists, so no connection is ever dialled
// for credentials that would be refused.
import { InsecureCredentialsError } from '../serving/errors.js';
export { InsecureCredentialsError };

export interface CloudTarget {
  /** host:port for grpc-js. */
  target: string;
  tls: boolean;
  host: string;
}

/** "https://host:port" (TLS, port 443 by default), "http://host:port" or "host:port" (plaintext, port 80 by default). */
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
