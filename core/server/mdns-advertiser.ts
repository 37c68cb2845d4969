// The runtime advertises itself on the local network through mDNS / DNS-SD (unless -disable-mdns), as
// the reference platform does: `<name>._rpc._tcp.local` with the gRPC port and TXT `grpc` (and `webrtc`).
// One socket per IPv4 interface the gRPC server is reachable on, so that each answer carries the address
// of the interface it goes out on: loopback when bound to a loopback address, every non-loopback interface
// when bound to a wildcard (re-read every RESCAN_MS: Wi-Fi may come up after the runtime), or the one
// interface holding a specific address. It answers queries, announces at start (twice, 1 s apart,
// RFC 6762 §8.3) and sends a goodbye (TTL 0, §10.1) at stop.
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import type { DriverLogger } from '../../plugins/contract.js';
import { answerQuestions, dnsLabel, serviceRecords, type Advertisement } from '../serving/mdns/rpc-service.js';
import { MDNS_PORT, onSubnet, openMdnsTransport, type Ipv4Interface, type MdnsTransport } from '../serving/mdns/transport.js';

const RESCAN_MS = 10_000;
const ANNOUNCE_GAP_MS = 1000;

type Iface = Ipv4Interface;

export interface AdvertiserOptions {
  /** The instance name and host label (dnsLabel'ed by the caller). */
  instance: string;
  host: string;
  /** The gRPC server's host as bound (bind_address's host), read at each rescan, and its port, read at each answer. */
  bindHost: () => string;
  port: () => number;
  txt: string[];
  log: Pick<DriverLogger, 'info' | 'warn' | 'debug'>;
  /** Another port than 5353, for tests only. */
  mdnsPort?: number;
}

const LOOPBACK: Iface = { address: '127.0.0.1', netmask: '255.0.0.0' };

/** The interfaces to advertise on for a bind host: see the file's comment. */
export async function interfacesFor(bindHost: string): Promise<Iface[]> {
  const host = bindHost.replace(/^\[(.*)\]$/, '$1');
  const all = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4') as { address: string; netmask: string; internal: boolean }[];
  if (host === '' || host === '0.0.0.0' || host === '::') return all.filter((i) => !i.internal).map(({ address, netmask }) => ({ address, netmask }));
  const address = /^[\d.]+$/.test(host)
    ? host
    : await lookup(host, { family: 4 }).then(
        (r) => r.address,
        () => undefined,
      );
  if (!address) return [];
  if (address.startsWith('127.')) return [LOOPBACK];
  return all.filter((i) => i.address === address).map(({ address, netmask }) => ({ address, netmask }));
}

export class MdnsAdvertiser {
  private readonly sockets = new Map<string, { iface: Iface; transport: MdnsTransport }>();
  private timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private syncing: Promise<void> = Promise.resolve();

  private constructor(private readonly options: AdvertiserOptions) {}

  static async start(options: AdvertiserOptions): Promise<MdnsAdvertiser> {
    const advertiser = new MdnsAdvertiser(options);
    await advertiser.sync();
    if (advertiser.sockets.size === 0) options.log.warn('mDNS: no IPv4 interface to advertise on for the bind address', { bind_host: options.bindHost() });
    const rescan = setInterval(() => void advertiser.sync(), RESCAN_MS);
    rescan.unref();
    advertiser.timers.add(rescan);
    return advertiser;
  }

  private get ad(): Advertisement {
    return { instance: this.options.instance, host: this.options.host, port: this.options.port(), txt: this.options.txt };
  }

  /** Opens sockets for new interface addresses and closes those of vanished ones; one sync at a time. */
  private sync(): Promise<void> {
    this.syncing = this.syncing.then(async () => {
      if (this.stopped) return;
      const wanted = await interfacesFor(this.options.bindHost());
      for (const [address, { transport }] of this.sockets) {
        if (wanted.some((i) => i.address === address)) continue;
        this.sockets.delete(address);
        await transport.close();
      }
      for (const iface of wanted) {
        if (this.sockets.has(iface.address) || this.stopped) continue;
        try {
          const transport = await openMdnsTransport({
            interfaceAddress: iface.address,
            port: this.options.mdnsPort,
            onWarning: (err) => this.options.log.debug('mDNS: ignored a bad packet or a failed send', { interface: iface.address, error: err.message }),
          });
          transport.onQuery((query, from) => this.answer(iface, transport, query, from));
          this.sockets.set(iface.address, { iface, transport });
          this.options.log.info('mDNS: advertising', { name: this.options.instance, port: this.options.port(), interface: iface.address });
          void this.announce(iface, transport);
          this.timers.add(setTimeout(() => void this.announce(iface, transport), ANNOUNCE_GAP_MS).unref());
        } catch (err) {
          this.options.log.warn('mDNS: cannot open a socket on an interface; not advertised there', {
            interface: iface.address,
            error: (err as Error).message,
          });
        }
      }
    });
    return this.syncing;
  }

  private answer(
    iface: Iface,
    transport: MdnsTransport,
    query: { id: number; questions: { name?: unknown; type?: unknown }[] },
    from: { address: string; port: number },
  ): void {
    if (this.stopped || !onSubnet(iface, from.address)) return;
    const reply = answerQuestions(this.ad, iface.address, query.questions);
    if (!reply) return;
    // A one-shot querier on another port gets a unicast reply with its id (RFC 6762 §6.7).
    if (from.port !== (this.options.mdnsPort ?? MDNS_PORT)) void transport.respond({ id: query.id, ...reply }, { address: from.address, port: from.port });
    else void transport.respond(reply);
  }

  private announce(iface: Iface, transport: MdnsTransport, ttl?: number): Promise<void> {
    const r = serviceRecords(this.ad, iface.address, ttl);
    return transport.respond({ answers: [r.ptr, r.srv, r.txt, r.a] });
  }

  /** Sends the goodbye on every interface, then closes the sockets. Safe to call more than once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.syncing;
    await Promise.all(
      [...this.sockets.values()].map(async ({ iface, transport }) => {
        await this.announce(iface, transport, 0);
        await transport.close();
      }),
    );
    this.sockets.clear();
    this.options.log.info('mDNS: goodbye sent');
  }
}

/**
 * The runtime's advertisement: the instance is the part's name when the cloud has given it (an online
 * machine), else the host name; SRV points at the host name (`<host>.local`); the port is that of
 * `address()` (bind_address's host:port, read at each answer, so a rebind is followed).
 */
export function advertiseRuntime(options: {
  address: () => string;
  partName?: string;
  hostName: string;
  webrtc: boolean;
  log: AdvertiserOptions['log'];
  mdnsPort?: number;
}): Promise<MdnsAdvertiser> {
  const hostOf = (address: string) => address.slice(0, address.lastIndexOf(':'));
  const host = dnsLabel(options.hostName.split('.')[0] ?? '');
  return MdnsAdvertiser.start({
    instance: options.partName ? dnsLabel(options.partName) : host,
    host,
    bindHost: () => hostOf(options.address()),
    port: () => Number(options.address().slice(options.address().lastIndexOf(':') + 1)),
    txt: options.webrtc ? ['grpc', 'webrtc'] : ['grpc'],
    log: options.log,
    mdnsPort: options.mdnsPort,
  });
}
