// The machine's one link to its cloud. It parses the address, enforces the plaintext rule before any
// channel exists (address.ts), authenticates as the part (AuthService/Authenticate with the part's secret,
// `robot-secret`, or the machine's API key) and renews the access token before it expires or when the
// cloud refuses it. The online config, status reports, log shipping, the data manager's sync (in its
// worker, from the same serialisable settings) and package downloads all call the cloud through it;
// nothing else in core/ authenticates to the cloud.
import { ChannelCredentials, Metadata, status, type CallOptions, type ClientOptions, type ServiceError } from '@grpc/grpc-js';
import { RobotServiceClient } from '../../gen/platform/app/v1/robot_part.js';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { checkCredentialTransport, cloudTarget } from './address.js';
import type { CloudLinkSettings } from './link-settings.js';
import { cloudReachable } from './reachable.js';
import { CredentialsRefusedError } from '../serving/errors.js';
export { CredentialsRefusedError };

/** A generated gRPC client class (or grpc-js's own Client), built on the link's target and transport. */
export type ClientClass<C> = new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>) => C;

export interface CloudLinkOptions {
  /** Deadline of Authenticate and of each unary call. */
  timeoutMs?: number;
  /**
   * After an unreachable cloud (UNAVAILABLE, DEADLINE_EXCEEDED) start from fresh channels rather than wait
   * on a channel's own reconnect backoff. Right for short calls (sync uploads); wrong for a link that also
   * holds a long stream (the online config's WatchConfig), which closing the channel would cut.
   */
  resetWhenUnreachable?: boolean;
}

const CHANNEL_OPTIONS: Partial<ClientOptions> = {
  // A cloud that vanishes without closing the connection is noticed within 15 s.
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  // After an outage the channel's own reconnect backoff (120 s at most by default) would keep failing calls
  // for a while after the cloud serves again; capped, a cloud that comes back is found within seconds.
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 2000,
};

const REFUSED_CREDENTIALS = new Set([status.UNAUTHENTICATED, status.PERMISSION_DENIED, status.NOT_FOUND]);

export class CloudLink {
  private readonly target: string;
  private readonly transport: () => ChannelCredentials;
  private readonly clients = new Map<ClientClass<unknown>, { close(): void }>();
  private token?: { value: string; expiresAt: number };
  private readonly timeoutMs: number;
  private readonly resetWhenUnreachable: boolean;

  /** Throws InsecureCredentialsError (naming -allow-insecure-creds) before any channel exists. */
  constructor(
    readonly settings: CloudLinkSettings,
    options: CloudLinkOptions = {},
  ) {
    const target = cloudTarget(settings.appAddress);
    checkCredentialTransport(target, settings.allowInsecure);
    this.target = target.target;
    this.transport = () => (target.tls ? ChannelCredentials.createSsl() : ChannelCredentials.createInsecure());
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.resetWhenUnreachable = options.resetWhenUnreachable ?? false;
  }

  get partId(): string {
    return this.settings.partId;
  }

  get appAddress(): string {
    return this.settings.appAddress;
  }

  /** A client of `Class` on this link's target, made once (and again after a reset). Calls need metadata(). */
  client<C extends { close(): void }>(Class: ClientClass<C>): C {
    let client = this.clients.get(Class) as C | undefined;
    if (!client) {
      client = new Class(this.target, this.transport(), CHANNEL_OPTIONS);
      this.clients.set(Class, client);
    }
    return client;
  }

  /** The part's machine API (config, status, logs). */
  get robot(): RobotServiceClient {
    return this.client(RobotServiceClient);
  }

  /** Call metadata with a valid access token; throws CredentialsRefusedError for bad credentials. */
  async metadata(): Promise<Metadata> {
    const md = new Metadata();
    md.set('authorization', `Bearer ${await this.accessToken()}`);
    return md;
  }

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    const { credentials } = this.settings;
    const request = { entity: credentials.entity, credentials: { type: credentials.type, payload: credentials.payload } };
    const auth = this.client(AuthServiceClient);
    const res = await new Promise<{ accessToken: string; expiresInSeconds: number }>((resolve, reject) =>
      auth.authenticate(request, new Metadata(), { deadline: Date.now() + this.timeoutMs }, (err, r) => {
        if (!err) return resolve(r);
        reject(REFUSED_CREDENTIALS.has(err.code) ? new CredentialsRefusedError(err) : err);
      }),
    );
    // Renewed a minute early (or halfway through a short lifetime) so that no call carries a token that
    // expires on the way.
    const ttlMs = res.expiresInSeconds * 1000;
    this.token = { value: res.accessToken, expiresAt: Date.now() + Math.max(ttlMs - 60_000, ttlMs / 2) };
    return this.token.value;
  }

  /** Forgets the token after the cloud refused it (e.g. a restarted cloud with another signing secret). */
  refused(err: unknown): void {
    if ((err as { code?: number }).code === status.UNAUTHENTICATED) this.token = undefined;
  }

  /**
   * Runs one call with a token. A refused token is renewed and the call tried once more; an unreachable
   * cloud resets the channels when the link was made for that (resetWhenUnreachable).
   */
  async call<T>(run: (md: Metadata, options: Partial<CallOptions>) => Promise<T>, timeoutMs = this.timeoutMs): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const hadToken = this.token !== undefined;
      try {
        const md = await this.metadata();
        const result = await run(md, { deadline: Date.now() + timeoutMs });
        // Tells a config watch waiting to reconnect that the cloud serves again (core/online/reconnect.ts).
        cloudReachable();
        return result;
      } catch (err) {
        const code = (err as ServiceError).code;
        if (this.resetWhenUnreachable && (code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED)) this.reset();
        this.refused(err);
        if (code === status.UNAUTHENTICATED && attempt === 0 && hadToken && !(err instanceof CredentialsRefusedError)) continue;
        throw err;
      }
    }
  }

  /** A unary call on the part's RobotService. */
  unary<Req, Res>(
    fn: (req: Req, md: Metadata, options: Partial<CallOptions>, cb: (err: ServiceError | null, res: Res) => void) => unknown,
    req: Req,
  ): Promise<Res> {
    return this.call(
      (md, options) => new Promise<Res>((resolve, reject) => fn.call(this.robot, req, md, options, (err, res) => (err ? reject(err) : resolve(res)))),
    );
  }

  /** Closes every channel; the next call opens new ones. */
  reset(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }

  close(): void {
    this.reset();
  }
}
