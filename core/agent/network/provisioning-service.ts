// The provisioning gRPC service (platform.provisioning.v1.ProvisioningService) that a mobile app calls
// on the machine while it is in provisioning mode. It runs beside the captive portal and shares its
// rules: every call is user activity, bad input is INVALID_ARGUMENT naming the field, credentials are
// stored with mode 0600 (never over an offline config) and make the agent restart online.
import { existsSync } from 'node:fs';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { withBoundedStatus } from '../../serving/bounded-status.js';
import { writeFileDurable } from '../../serving/durable-file.js';
import type { Logger } from '../agent-log.js';
import { AGENT_VERSION } from '../agent-version.js';
import { ProvisioningServiceService, type NetworkInfo } from '../../../gen/platform/provisioning/v1/provisioning.js';
import type { AgentConfig } from '../../config/agent-config.js';
import type { NetworkBackend } from './backend.js';
import { PortalInputError, credentialsContent, holdsOfflineConfig } from './captive-portal.js';
import type { NetworkSupervisor } from './network-supervisor.js';
import { NetworkInputError } from './profiles.js';
import { ProvisioningArgumentError } from '../../serving/errors.js';

export interface ProvisioningServiceOptions {
  network: NetworkSupervisor;
  backend: NetworkBackend;
  config: () => AgentConfig;
  credentialsFile: string;
  logger: Logger;
  credentialsSaved?: () => void;
}

function handler<Req, Res>(opts: ProvisioningServiceOptions, fn: (req: Req) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    opts.network.userActivity();
    fn(call.request).then(
      (res) => callback(null, res),
      (err: Error) => {
        const invalid = err instanceof NetworkInputError || err instanceof PortalInputError || err instanceof ProvisioningArgumentError;
        if (!invalid) opts.logger.error({ err: err.message }, 'provisioning service: call failed');
        callback({ code: invalid ? status.INVALID_ARGUMENT : status.INTERNAL, details: err.message, name: 'Error', message: err.message });
      },
    );
  };
}

export class ProvisioningService {
  private server?: Server;

  constructor(private readonly opts: ProvisioningServiceOptions) {}

  /** Listens on host:port; resolves with the bound port. */
  async listen(host: string, port: number): Promise<number> {
    const o = this.opts;
    // Every status bounded (bounded-status.ts): an input echoed into an error (a 128 KiB `type`, say)
    // must not grow the trailers past what the app's HTTP/2 client reads, which wedges its connection.
    const server = new Server(withBoundedStatus({}));
    server.addService(ProvisioningServiceService, {
      getSmartMachineStatus: handler(o, async () => {
        const net = o.config().network_configuration;
        const attempt = o.network.lastAttempt;
        const latest: NetworkInfo | undefined = attempt && {
          type: 'wifi',
          ssid: attempt.ssid,
          security: '',
          signal: 0,
          connected: !attempt.error && o.network.state === 'online',
          lastError: attempt.error ?? '',
        };
        return {
          provisioningInfo: { fragmentId: net.fragment_id ?? '', model: net.model, manufacturer: net.manufacturer },
          hasSmartMachineCredentials: existsSync(o.credentialsFile) && !(await holdsOfflineConfig(o.credentialsFile)),
          isOnline: o.network.state === 'online',
          latestConnectionAttempt: latest,
          errors: o.network.takeErrors(),
          agentVersion: AGENT_VERSION,
        };
      }),
      setNetworkCredentials: handler(o, async (req: { type: string; ssid: string; psk: string; priority: number }) => {
        if (req.type !== '' && req.type !== 'wifi') throw new ProvisioningArgumentError(`type: must be "wifi" (is "${req.type}")`);
        await o.network.submitNetwork(req.ssid, req.psk, req.priority);
        return {};
      }),
      setSmartMachineCredentials: handler(o, async (req: { cloud?: { id: string; secret: string; appAddress: string } }) => {
        const c = req.cloud;
        if (!c) throw new ProvisioningArgumentError('cloud: is required');
        const content = credentialsContent({ cloud: { id: c.id, secret: c.secret, app_address: c.appAddress } }, o.credentialsFile);
        if (await holdsOfflineConfig(o.credentialsFile))
          throw new ProvisioningArgumentError(`credentials: this machine runs from the offline config ${o.credentialsFile}`);
        await writeFileDurable(o.credentialsFile, content, 0o600);
        o.logger.info({ file: o.credentialsFile }, 'provisioning service: machine credentials saved');
        setImmediate(() => o.credentialsSaved?.());
        return {};
      }),
      getNetworkList: handler(o, async () => {
        const nets = (await o.backend.scan()).sort((a, b) => b.signal - a.signal);
        const lastError = o.network.lastAttempt?.error;
        return {
          networks: nets.map((n) => ({
            type: 'wifi',
            ssid: n.ssid,
            security: n.security,
            signal: n.signal,
            connected: n.connected,
            lastError: lastError && o.network.lastAttempt?.ssid === n.ssid ? lastError : '',
          })),
        };
      }),
      exitProvisioning: handler(o, async () => {
        await o.network.exitProvisioning();
        return {};
      }),
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.server = server;
    return bound;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    await new Promise<void>((resolve) => s.tryShutdown(() => resolve()));
  }
}
