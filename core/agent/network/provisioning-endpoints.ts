// What a user reaches while the machine is in provisioning mode: the captive portal (HTTP, default port
// 80) and the provisioning gRPC service (default port 4772). They run exactly while provisioning; one
// that cannot listen is logged and provisioning goes on with the other.
import type { Logger } from '../agent-log.js';
import type { AgentConfig } from '../../config/agent-config.js';
import type { NetworkBackend } from './backend.js';
import { CaptivePortal } from './captive-portal.js';
import type { NetworkSupervisor } from './network-supervisor.js';
import type { ProvisioningService } from './provisioning-service.js';

export interface HostPort {
  host: string;
  port: number;
}

export interface ProvisioningAddresses {
  portal?: HostPort;
  grpc?: HostPort;
}

export interface ProvisioningEndpointsOptions {
  addresses: ProvisioningAddresses;
  network: NetworkSupervisor;
  backend: NetworkBackend;
  config: () => AgentConfig;
  credentialsFile: string;
  logger: Logger;
  credentialsSaved?: () => void;
}

export class ProvisioningEndpoints {
  private portal?: CaptivePortal;
  private grpc?: ProvisioningService;

  constructor(private readonly opts: ProvisioningEndpointsOptions) {}

  async start(): Promise<void> {
    const o = this.opts;
    const { portal, grpc } = o.addresses;
    if (portal && !this.portal) {
      const net = o.config().network_configuration;
      const p = new CaptivePortal({
        hooks: {
          userActivity: () => o.network.userActivity(),
          listNetworks: () => o.backend.scan(),
          submitNetwork: (ssid, psk) => o.network.submitNetwork(ssid, psk),
          credentialsSaved: () => o.credentialsSaved?.(),
        },
        credentialsFile: o.credentialsFile,
        logger: o.logger,
        title: `${net.manufacturer} ${net.model} setup`,
      });
      try {
        const addr = await p.listen(portal.host, portal.port);
        this.portal = p;
        o.logger.info({ address: `${addr.address}:${addr.port}` }, 'captive portal listening');
      } catch (err) {
        o.logger.error({ err: (err as Error).message }, 'captive portal cannot listen');
      }
    }
    if (grpc && !this.grpc) {
      // gRPC is loaded only now: an agent that never provisions stays smaller (bench:agent-rss).
      const { ProvisioningService } = await import('./provisioning-service.js');
      const s = new ProvisioningService(o);
      try {
        const port = await s.listen(grpc.host, grpc.port);
        this.grpc = s;
        o.logger.info({ address: `${grpc.host}:${port}` }, 'provisioning service listening');
      } catch (err) {
        o.logger.error({ err: (err as Error).message }, 'provisioning service cannot listen');
      }
    }
  }

  async stop(): Promise<void> {
    const { portal, grpc } = this;
    this.portal = undefined;
    this.grpc = undefined;
    if (portal) {
      await portal.close();
      this.opts.logger.info('captive portal closed');
    }
    if (grpc) {
      await grpc.close();
      this.opts.logger.info('provisioning service closed');
    }
  }
}
