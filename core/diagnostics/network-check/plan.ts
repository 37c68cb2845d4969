// Which checks -network-check runs for a machine config: what this runtime needs from the network, and
// nothing it does not use. Checks that do not apply are listed as skipped with the reason.
import type { MachineConfig } from '../../config/machine-config.js';
import { probeBind, probeDns, probeTcp, withTimeout } from './probes.js';

export interface NetworkCheck {
  /** bind, dns or tcp. */
  kind: 'bind' | 'dns' | 'tcp';
  target: string;
  /** What the config says this is for. */
  purpose: string;
  /** Resolves with a short detail, or rejects with the error. */
  run(): Promise<string>;
}

export interface NetworkCheckPlan {
  checks: NetworkCheck[];
  skipped: string[];
}

export interface Endpoint {
  host: string;
  port: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'https:': 443, 'grpcs:': 443, 'http:': 80, 'grpc:': 80 };

/** host:port of an address written as a URL (https://app:443) or as host:port; undefined when neither. */
export function parseEndpoint(address: string): Endpoint | undefined {
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(address);
  let url: URL;
  try {
    url = new URL(hasScheme ? address : `tcp://${address}`);
  } catch {
    return undefined;
  }
  if (!url.hostname) return undefined;
  const port = url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 443);
  // URL keeps the brackets of an IPv6 literal; the socket APIs want it bare.
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port };
}

export function splitHostPort(address: string): Endpoint {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) };
}

export function planNetworkChecks(config: MachineConfig, timeoutMs: number): NetworkCheckPlan {
  const checks: NetworkCheck[] = [];
  const skipped: string[] = [];
  const bind = splitHostPort(config.network.bind_address);
  checks.push({
    kind: 'bind',
    target: config.network.bind_address,
    purpose: 'network.bind_address',
    run: () => withTimeout(probeBind(bind.host, bind.port), timeoutMs),
  });

  const resolved = new Set<string>();
  const dns = (host: string, purpose: string) => {
    if (resolved.has(host)) return;
    resolved.add(host);
    checks.push({ kind: 'dns', target: host, purpose, run: () => withTimeout(probeDns(host), timeoutMs) });
  };

  const address = config.cloud?.app_address;
  if (!config.cloud) skipped.push('cloud DNS and TCP checks: the config has no cloud section');
  else if (!address) skipped.push('cloud DNS and TCP checks: cloud.app_address is not set');
  else {
    const cloud = parseEndpoint(address);
    if (!cloud) {
      checks.push({
        kind: 'dns',
        target: address,
        purpose: 'cloud.app_address',
        run: () => Promise.reject(new Error('cannot be parsed as a URL or host:port')),
      });
    } else {
      dns(cloud.host, 'cloud.app_address');
      checks.push({ kind: 'tcp', target: `${cloud.host}:${cloud.port}`, purpose: 'cloud.app_address', run: () => probeTcp(cloud.host, cloud.port, timeoutMs) });
    }
  }

  // Other hosts the machine reaches: download URLs pinned in the agent's version control.
  for (const [subsystem, spec] of Object.entries(config.agent?.version_control ?? {})) {
    if (!/^https?:\/\//i.test(spec)) continue;
    const host = parseEndpoint(spec)?.host;
    if (host) dns(host, `agent.version_control.${subsystem}`);
  }
  return { checks, skipped };
}
