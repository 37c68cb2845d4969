// A connection to platform-cloud: the service address, channel credentials, and an access token got
// from AuthService/Authenticate with an API key, renewed shortly before it expires.
import { credentials as grpcCredentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { AuthServiceClient, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { ValueError } from './errors.js';

export interface ApiKeyCredentials {
  type: 'api-key';
  /** The API key id. */
  authEntity: string;
  /** The API key. */
  payload: string;
}

/** A machine part's own credentials (part id and secret); enough to upload data. */
export interface PartSecretCredentials {
  type: 'robot-secret';
  authEntity: string;
  payload: string;
}

export interface CloudConnectionOptions {
  /** 'host:port', 'http://host:port' (plaintext) or 'https://host[:port]' (TLS, default port 443). */
  serviceHost: string;
  credentials: ApiKeyCredentials | PartSecretCredentials;
  /**
   * PEM root certificate(s) to trust for an https:// serviceHost instead of the system's roots, for a
   * cloud with a self-signed or private-CA certificate. Without it, grpc-js uses the system roots (or
   * the file named by GRPC_DEFAULT_SSL_ROOTS_FILE_PATH).
   */
  rootCertificates?: Buffer;
}

/** Address and channel credentials for a serviceHost. */
export function parseServiceHost(serviceHost: string, rootCertificates?: Buffer): { address: string; channel: ChannelCredentials } {
  const match = /^(?:(https?):\/\/)?([^/]+?)(?::(\d+))?\/?$/.exec(serviceHost.trim());
  if (!match) throw new ValueError(`serviceHost "${serviceHost}" is not of the form [http[s]://]host[:port]`);
  const [, scheme, host, port] = match;
  if (scheme === 'https') return { address: `${host}:${port ?? 443}`, channel: grpcCredentials.createSsl(rootCertificates ?? null) };
  // A root certificate on a plaintext connection would silently do nothing; say so instead.
  if (rootCertificates) throw new ValueError(`rootCertificates needs an https:// serviceHost, got "${serviceHost}"`);
  if (!port && scheme !== 'http') throw new ValueError(`serviceHost "${serviceHost}" needs a port (or an http:// or https:// scheme)`);
  return { address: `${host}:${port ?? 80}`, channel: grpcCredentials.createInsecure() };
}

export class CloudConnection {
  readonly address: string;
  readonly channel: ChannelCredentials;
  private readonly auth: AuthServiceClient;
  private token?: { value: string; renewAt: number };
  private pending?: Promise<string>;

  constructor(private readonly options: CloudConnectionOptions) {
    const { address, channel } = parseServiceHost(options.serviceHost, options.rootCertificates);
    this.address = address;
    this.channel = channel;
    this.auth = new AuthServiceClient(address, channel);
  }

  /** Call metadata carrying `authorization: Bearer <token>`, authenticating first when needed. */
  async metadata(): Promise<Metadata> {
    const md = new Metadata();
    md.set('authorization', `Bearer ${await this.accessToken()}`);
    return md;
  }

  async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.renewAt) return this.token.value;
    this.pending ??= this.authenticate().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async authenticate(): Promise<string> {
    const { authEntity, payload, type } = this.options.credentials;
    const response = await new Promise<AuthenticateResponse>((resolve, reject) =>
      this.auth.authenticate({ entity: authEntity, credentials: { type, payload } }, (err, res) => (err ? reject(err) : resolve(res!))),
    );
    // Renew at 80% of the lifetime so a call never starts with a token about to expire.
    const lifetimeMs = (response.expiresInSeconds || 60) * 1000;
    this.token = { value: response.accessToken, renewAt: Date.now() + lifetimeMs * 0.8 };
    return response.accessToken;
  }

  close(): void {
    this.auth.close();
  }
}
