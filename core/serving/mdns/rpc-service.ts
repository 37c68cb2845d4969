// The DNS-SD records of a machine (RFC 6763), as the reference platform advertises it: service type
// `_rpc._tcp` in `local.`, the instance name, the gRPC port in SRV, and TXT strings naming the transports
// served (`grpc`, and `webrtc` when the runtime answers WebRTC signaling). The runtime builds them
// (core/server/mdns-advertiser.ts); the client reads them back (cloud/client/discovery.ts).
import type { Answer } from 'dns-packet';

export const SERVICE_TYPE = '_rpc._tcp.local';
/** DNS-SD service enumeration (RFC 6763 §9): answered with SERVICE_TYPE. */
export const SERVICES_ENUMERATION = '_services._dns-sd._udp.local';
/** RFC 6762 §10: 120 s for records naming a host (SRV, A), 75 minutes for the others. */
export const HOST_TTL = 120;
export const OTHER_TTL = 4500;

export interface Advertisement {
  /** The DNS-SD instance name (one label: dots are replaced by dashes). */
  instance: string;
  /** The host label: SRV points at `<host>.local`. */
  host: string;
  port: number;
  /** TXT strings, e.g. ['grpc', 'webrtc']. */
  txt: string[];
}

/** One DNS label: no dots (they would split it), at most 63 bytes, never empty. */
export function dnsLabel(text: string, fallback = 'machine'): string {
  let label = text.replace(/\./g, '-').trim();
  while (Buffer.byteLength(label) > 63) label = label.slice(0, -1);
  return label || fallback;
}

export const instanceFqdn = (ad: Advertisement) => `${ad.instance}.${SERVICE_TYPE}`;
export const hostFqdn = (ad: Advertisement) => `${ad.host}.local`;

/**
 * The records of one advertisement on one interface, with `ttl` (0 for goodbye). SRV, TXT and A are unique
 * to this responder, so they carry the cache-flush bit; the shared PTR does not.
 */
export function serviceRecords(ad: Advertisement, address: string, ttl?: number): { ptr: Answer; srv: Answer; txt: Answer; a: Answer; types: Answer } {
  const t = (normal: number) => ttl ?? normal;
  return {
    ptr: { name: SERVICE_TYPE, type: 'PTR', ttl: t(OTHER_TTL), data: instanceFqdn(ad) },
    srv: { name: instanceFqdn(ad), type: 'SRV', ttl: t(HOST_TTL), flush: true, data: { port: ad.port, target: hostFqdn(ad), priority: 0, weight: 0 } },
    txt: { name: instanceFqdn(ad), type: 'TXT', ttl: t(OTHER_TTL), flush: true, data: ad.txt.length ? ad.txt : [''] },
    a: { name: hostFqdn(ad), type: 'A', ttl: t(HOST_TTL), flush: true, data: address },
    types: { name: SERVICES_ENUMERATION, type: 'PTR', ttl: t(OTHER_TTL), data: SERVICE_TYPE },
  };
}

const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/**
 * The answer to one query's questions, or undefined when none is ours. The answers hold what was asked
 * for; the additionals what the asker will need next (RFC 6763 §12), so one round trip is enough.
 */
export function answerQuestions(
  ad: Advertisement,
  address: string,
  questions: readonly { name?: unknown; type?: unknown }[],
): { answers: Answer[]; additionals: Answer[] } | undefined {
  const r = serviceRecords(ad, address);
  const answers = new Set<Answer>();
  for (const q of questions) {
    const any = q.type === 'ANY';
    if (same(q.name, SERVICE_TYPE) && (any || q.type === 'PTR')) answers.add(r.ptr);
    if (same(q.name, SERVICES_ENUMERATION) && (any || q.type === 'PTR')) answers.add(r.types);
    if (same(q.name, instanceFqdn(ad))) {
      if (any || q.type === 'SRV') answers.add(r.srv);
      if (any || q.type === 'TXT') answers.add(r.txt);
    }
    if (same(q.name, hostFqdn(ad)) && (any || q.type === 'A')) answers.add(r.a);
  }
  if (answers.size === 0) return undefined;
  const wanted = answers.has(r.ptr) ? [r.srv, r.txt, r.a] : answers.has(r.srv) ? [r.a] : [];
  const additionals = wanted.filter((record) => !answers.has(record));
  return { answers: [...answers], additionals };
}

/** A machine as discovered on the network. */
export interface DiscoveredMachine {
  /** The instance name (the machine's name on the LAN). */
  name: string;
  /** The host name the SRV record points at (`<host>.local`). */
  host: string;
  /** The gRPC port. */
  port: number;
  /** The IPv4 addresses of `host` seen in the responses; dial `${addresses[0]}:${port}`. */
  addresses: string[];
  /** The TXT strings: `grpc`, and `webrtc` when the machine answers WebRTC signaling. */
  txt: string[];
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : undefined);

/**
 * Collects records from responses into machines. Every field is checked: a response from the network
 * may hold anything, and a malformed record is skipped, never trusted. A record with TTL 0 (goodbye)
 * removes what it names.
 */
export class MachineCollector {
  /** Lower-cased instance FQDN -> as announced (names compare without case, RFC 6762 §16). */
  private readonly instances = new Map<string, string>();
  private readonly srv = new Map<string, { port: number; target: string }>();
  private readonly txt = new Map<string, string[]>();
  private readonly addresses = new Map<string, Set<string>>();

  add(records: readonly unknown[]): void {
    for (const record of records) {
      if (!record || typeof record !== 'object') continue;
      const { name, type, ttl, data } = record as { name?: unknown; type?: unknown; ttl?: unknown; data?: unknown };
      if (typeof name !== 'string') continue;
      const key = name.toLowerCase();
      const gone = ttl === 0;
      if (type === 'PTR' && same(name, SERVICE_TYPE) && typeof data === 'string' && data.toLowerCase().endsWith(`.${SERVICE_TYPE.toLowerCase()}`)) {
        if (gone) this.instances.delete(data.toLowerCase());
        else this.instances.set(data.toLowerCase(), data);
      } else if (type === 'SRV' && data && typeof data === 'object') {
        const { port, target } = data as { port?: unknown; target?: unknown };
        if (gone) this.srv.delete(key);
        else if (Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536 && typeof target === 'string')
          this.srv.set(key, { port: port as number, target });
      } else if (type === 'TXT') {
        const strings = (Array.isArray(data) ? data : [data]).map(text).filter((s): s is string => s !== undefined && s !== '');
        if (gone) this.txt.delete(key);
        else this.txt.set(key, strings);
      } else if (type === 'A' && typeof data === 'string' && /^\d{1,3}(\.\d{1,3}){3}$/.test(data)) {
        const set = this.addresses.get(key) ?? new Set<string>();
        if (gone) set.delete(data);
        else set.add(data);
        this.addresses.set(key, set);
      }
    }
  }

  /** Instance names announced (PTR) whose SRV is still missing: worth asking for directly. */
  unresolved(): string[] {
    return [...this.instances].filter(([key]) => !this.srv.has(key)).map(([, fqdn]) => fqdn);
  }

  /** The machines known now: announced, with an SRV; sorted by name. */
  machines(): DiscoveredMachine[] {
    const out: DiscoveredMachine[] = [];
    for (const [key, fqdn] of this.instances) {
      const srv = this.srv.get(key);
      if (!srv) continue;
      out.push({
        name: fqdn.slice(0, -(SERVICE_TYPE.length + 1)),
        host: srv.target.replace(/\.local\.?$/i, ''),
        port: srv.port,
        addresses: [...(this.addresses.get(srv.target.toLowerCase()) ?? [])].sort(),
        txt: this.txt.get(key) ?? [],
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.port - b.port);
  }
}
