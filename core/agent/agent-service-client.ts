// The agent's calls to the cloud: authenticate with the machine's API key, then ask the agent service
// for the saved agent config and the binaries to run.
import { credentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { hostname } from 'node:os';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { AgentDeviceServiceClient, type DeviceAgentConfigRequest, type DeviceAgentConfigResponse } from '../../gen/platform/app/agent/v1/agent.js';
import type { CloudCredentials } from './credentials.js';

/** "linux/amd64"-style name of this host, as release tables list binaries. */
export function hostPlatform(platform = process.platform, arch = process.arch): string {
  const goArch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386' };
  return `${platform === 'win32' ? 'windows' : platform}/${goArch[arch] ?? arch}`;
}

/** Splits "https://host:port" into a gRPC target and channel credentials (TLS only for https). */
export function grpcTarget(address: string): { target: string; creds: ChannelCredentials } {
  const m = /^(https?):\/\/([^/]+)\/?$/i.exec(address);
  if (m) {
    const tls = m[1].toLowerCase() === 'https';
    const target = /:\d+$/.test(m[2]) ? m[2] : `${m[2]}:${tls ? 443 : 80}`;
    return { target, creds: tls ? credentials.createSsl() : credentials.createInsecure() };
  }
  return { target: address, creds: credentials.createInsecure() };
}

function call<Req, Res>(
  fn: (req: Req, md: Metadata, opts: { deadline: Date }, cb: (err: Error | null, res: Res) => void) => unknown,
  req: Req,
  md: Metadata,
  timeoutMs: number,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(req, md, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

export class AgentCloudClient {
  private readonly auth: AuthServiceClient;
  private readonly agent: AgentDeviceServiceClient;
  private token?: { value: string; expiresAt: number };

  constructor(
    private readonly creds: CloudCredentials,
    private readonly timeoutMs = 30_000,
  ) {
    const { target, creds: channelCreds } = grpcTarget(creds.appAddress);
    this.auth = new AuthServiceClient(target, channelCreds);
    this.agent = new AgentDeviceServiceClient(target, channelCreds);
  }

  private async bearer(): Promise<Metadata> {
    if (!this.token || Date.now() > this.token.expiresAt) {
      const res = await call(
        this.auth.authenticate.bind(this.auth),
        this.creds.secret
          ? { entity: this.creds.partId, credentials: { type: 'robot-secret', payload: this.creds.secret } }
          : { entity: this.creds.apiKeyId!, credentials: { type: 'api-key', payload: this.creds.apiKey! } },
        new Metadata(),
        this.timeoutMs,
      );
      // Renew a minute early so that a call never carries a token that expires on the way.
      this.token = { value: res.accessToken, expiresAt: Date.now() + Math.max(0, res.expiresInSeconds - 60) * 1000 };
    }
    const md = new Metadata();
    md.set('authorization', `Bearer ${this.token.value}`);
    return md;
  }

  async deviceAgentConfig(versions: Record<string, string>, requested: Record<string, string>): Promise<DeviceAgentConfigResponse> {
    const req: DeviceAgentConfigRequest = {
      partId: this.creds.partId,
      hostInfo: { platform: hostPlatform(), hostname: hostname(), distro: '' },
      versions,
      requested,
    };
    try {
      return await call(this.agent.deviceAgentConfig.bind(this.agent), req, await this.bearer(), this.timeoutMs);
    } catch (err) {
      if ((err as { code?: number }).code === 16) this.token = undefined; // UNAUTHENTICATED: log in again next time
      throw err;
    }
  }

  close(): void {
    this.auth.close();
    this.agent.close();
  }
}
