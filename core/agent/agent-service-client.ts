// The agent's calls to the cloud: the agent service, asked for the saved agent config and the binaries
// to run, through the machine's one CloudLink (core/cloud-link/), which authenticates with the machine's
// API key or the part's secret, renews the token and refuses plaintext to a remote host unless
// --allow-insecure-creds.
import { hostname } from 'node:os';
import { AgentDeviceServiceClient, type DeviceAgentConfigRequest, type DeviceAgentConfigResponse } from '../../gen/platform/app/agent/v1/agent.js';
import { InsecureCredentialsError } from '../cloud-link/address.js';
import { CloudLink } from '../cloud-link/cloud-link.js';
import { partCredentials, type CloudLinkSettings } from '../cloud-link/link-settings.js';
import type { CloudCredentials } from './credentials.js';

/** "linux/amd64"-style name of this host, as release tables list binaries. */
export function hostPlatform(platform = process.platform, arch = process.arch): string {
  const goArch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' };
  return `${platform === 'win32' ? 'windows' : platform}/${goArch[arch] ?? arch}`;
}

/** The link settings of the agent's credentials. */
export function agentLinkSettings(creds: CloudCredentials, allowInsecure: boolean): CloudLinkSettings {
  const apiKey = creds.apiKeyId !== undefined ? { id: creds.apiKeyId, key: creds.apiKey ?? '' } : undefined;
  return {
    partId: creds.partId,
    appAddress: creds.appAddress,
    credentials: partCredentials({ id: creds.partId, secret: creds.secret, api_key: apiKey }),
    allowInsecure,
  };
}

export class AgentCloudClient {
  private readonly link?: CloudLink;
  /** Why nothing is sent (plaintext to a remote host without --allow-insecure-creds): each check says so. */
  private readonly refusal?: InsecureCredentialsError;

  constructor(creds: CloudCredentials, allowInsecure: boolean, timeoutMs = 30_000) {
    try {
      this.link = new CloudLink(agentLinkSettings(creds, allowInsecure), { timeoutMs });
    } catch (err) {
      if (!(err instanceof InsecureCredentialsError)) throw err;
      this.refusal = err;
    }
  }

  async deviceAgentConfig(versions: Record<string, string>, requested: Record<string, string>): Promise<DeviceAgentConfigResponse> {
    if (!this.link) throw this.refusal!;
    const link = this.link;
    const req: DeviceAgentConfigRequest = {
      partId: link.partId,
      hostInfo: { platform: hostPlatform(), hostname: hostname(), distro: '' },
      versions,
      requested,
    };
    const agent = link.client(AgentDeviceServiceClient);
    return link.call(
      (md, options) => new Promise((resolve, reject) => agent.deviceAgentConfig(req, md, options, (err, res) => (err ? reject(err) : resolve(res)))),
    );
  }

  close(): void {
    this.link?.close();
  }
}
