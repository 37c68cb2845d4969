// Lists the machines on the local network: asks for `_rpc._tcp.local` over mDNS (the runtime's
// advertisement, core/server/mdns-advertiser.ts) and collects the answers for a while.
import { networkInterfaces } from 'node:os';
import { MachineCollector, SERVICE_TYPE, type DiscoveredMachine } from '../../core/serving/mdns/rpc-service.js';
import { onSubnet, openMdnsTransport, type Ipv4Interface, type MdnsTransport } from '../../core/serving/mdns/transport.js';

export type { DiscoveredMachine } from '../../core/serving/mdns/rpc-service.js';

export interface DiscoveryOptions {
  /** How long to listen for answers (default 1000 ms); the result is what was heard by then. */
  timeoutMs?: number;
  /**
   * The IPv4 addresses of the interfaces to ask on (default: every IPv4 interface that is up, loopback
   * included). Only answers from the interface's own subnet are taken.
   */
  interfaces?: string[];
}

type Iface = Ipv4Interface;

function ifaces(wanted?: string[]): Iface[] {
  const all = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === 'IPv4') as Iface[];
  if (!wanted) return all;
  return wanted.map((address) => {
    const found = all.find((i) => i.address === address);
    if (!found) throw new Error(`interfaces: ${address} is not an IPv4 address of this host`);
    return found;
  });
}

/**
 * The machines that answered within the timeout, sorted by name. Each has its name, host, gRPC port,
 * addresses and TXT strings; dial one with `RobotClient.connect({ address: `${m.addresses[0]}:${m.port}` })`.
 */
export async function discoverMachines(options: DiscoveryOptions = {}): Promise<DiscoveredMachine[]> {
  const timeoutMs = options.timeoutMs ?? 1000;
  const collector = new MachineCollector();
  const transports: MdnsTransport[] = [];
  try {
    for (const iface of ifaces(options.interfaces)) {
      let transport: MdnsTransport;
      try {
        transport = await openMdnsTransport({ interfaceAddress: iface.address });
      } catch (err) {
        if (options.interfaces) throw err; // asked for explicitly: say why it cannot be used
        continue;
      }
      transport.onResponse((response, from) => {
        if (onSubnet(iface, from.address)) collector.add([...response.answers, ...response.additionals]);
      });
      transports.push(transport);
    }
    if (transports.length === 0) throw new Error('no IPv4 interface could be used for mDNS');
    const ask = () => Promise.all(transports.map((t) => t.query([{ name: SERVICE_TYPE, type: 'PTR' }])));
    await ask();
    // Asked again half-way (a lost datagram is common on Wi-Fi), and for the SRV of any instance heard
    // of without one.
    await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
    await ask();
    const missing = collector.unresolved();
    if (missing.length)
      await Promise.all(
        transports.map((t) =>
          t.query(
            missing.flatMap((name) => [
              { name, type: 'SRV' as const },
              { name, type: 'TXT' as const },
            ]),
          ),
        ),
      );
    await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
    return collector.machines();
  } finally {
    await Promise.all(transports.map((t) => t.close()));
  }
}
