// One mDNS socket on one IPv4 interface (RFC 6762: UDP 5353, group 224.0.0.251), behind a narrow
// interface so that the runtime's advertiser and the client's discovery do not depend on multicast-dns
// directly. It lives in core/serving/ because the TypeScript client (cloud/client) uses it too.
import type { RemoteInfo } from 'node:dgram';
import multicastDns from 'multicast-dns';
import type { Answer, Question } from 'dns-packet';

export const MDNS_PORT = 5353;
export const MDNS_GROUP = '224.0.0.251';

/** An IPv4 interface: its address and netmask. */
export interface Ipv4Interface {
  address: string;
  netmask: string;
}

const toInt = (ip: string) => ip.split('.').reduce((n, part) => ((n << 8) | Number(part)) >>> 0, 0);

/**
 * Whether `address` is on the interface's subnet. Every socket on port 5353 hears the group on every
 * interface (Linux's IP_MULTICAST_ALL), so a packet from another subnet came in through another interface.
 */
export const onSubnet = (iface: Ipv4Interface, address: string) =>
  /^\d+\.\d+\.\d+\.\d+$/.test(address) && (toInt(iface.address) & toInt(iface.netmask)) >>> 0 === (toInt(address) & toInt(iface.netmask)) >>> 0;

export interface MdnsQuery {
  id: number;
  questions: Question[];
}

export interface MdnsResponse {
  answers: Answer[];
  additionals: Answer[];
}

export interface MdnsTransport {
  /** The interface's IPv4 address the socket sends from and listens on. */
  readonly interfaceAddress: string;
  onQuery(handler: (query: MdnsQuery, from: RemoteInfo) => void): void;
  onResponse(handler: (response: MdnsResponse, from: RemoteInfo) => void): void;
  /** Multicast by default; `to` for a unicast reply (a legacy querier on another port than 5353). */
  respond(response: { id?: number; answers: Answer[]; additionals?: Answer[] }, to?: { address: string; port: number }): Promise<void>;
  query(questions: Question[]): Promise<void>;
  close(): Promise<void>;
}

export interface TransportOptions {
  /** The IPv4 address of the interface to use (127.0.0.1 for loopback). */
  interfaceAddress: string;
  /** Socket problems after start (a vanished interface, a send that failed); never thrown. */
  onWarning?: (error: Error) => void;
  /** Another port than 5353, for tests only. */
  port?: number;
}

/** Opens the socket; resolves once it is bound and has joined the group on the interface. */
export function openMdnsTransport(options: TransportOptions): Promise<MdnsTransport> {
  const onWarning = options.onWarning ?? (() => undefined);
  const mdns = multicastDns({
    interface: options.interfaceAddress,
    // multicast-dns binds to `interface` by default, and a socket bound to a unicast address never
    // receives the group's datagrams on Linux: bind to the wildcard and join the group on the interface.
    bind: '0.0.0.0',
    port: options.port ?? MDNS_PORT,
    reuseAddr: true,
  });
  let closed = false;
  return new Promise((resolve, reject) => {
    mdns.once('error', (err: Error) => {
      if (!closed) {
        closed = true;
        mdns.destroy();
      }
      reject(err);
    });
    mdns.once('ready', () => {
      mdns.removeAllListeners('error');
      // Neither undecodable packets (multicast-dns reports them as warnings) nor socket errors may end
      // the process: they are the network's, not ours.
      mdns.on('error', onWarning);
      mdns.on('warning', onWarning);
      const send = (fn: (cb: (err: Error | null) => void) => void) =>
        new Promise<void>((done) => {
          if (closed) return done();
          fn((err) => {
            if (err) onWarning(err);
            done();
          });
        });
      resolve({
        interfaceAddress: options.interfaceAddress,
        onQuery: (handler) =>
          mdns.on('query', (packet, from) => {
            try {
              handler({ id: packet.id ?? 0, questions: Array.isArray(packet.questions) ? packet.questions : [] }, from);
            } catch (err) {
              onWarning(err as Error);
            }
          }),
        onResponse: (handler) =>
          mdns.on('response', (packet, from) => {
            try {
              handler(
                { answers: Array.isArray(packet.answers) ? packet.answers : [], additionals: Array.isArray(packet.additionals) ? packet.additionals : [] },
                from,
              );
            } catch (err) {
              onWarning(err as Error);
            }
          }),
        respond: (response, to) =>
          send((cb) => {
            try {
              mdns.respond(
                { id: response.id ?? 0, answers: response.answers, additionals: response.additionals ?? [] },
                to ?? { address: MDNS_GROUP, port: options.port ?? MDNS_PORT },
                cb,
              );
            } catch (err) {
              cb(err as Error); // a record that cannot be encoded
            }
          }),
        query: (questions) => send((cb) => mdns.query({ questions }, { address: MDNS_GROUP, port: options.port ?? MDNS_PORT }, cb)),
        close: () =>
          new Promise<void>((done) => {
            if (closed) return done();
            closed = true;
            mdns.destroy(() => done());
          }),
      });
    });
  });
}
