// The runtime's connection to the cloud's machine API: one channel, an access token obtained as the
// part (robot-secret) or with the machine's API key, renewed before it expires or when refused.
import { credentials, Metadata, status, type CallOptions, type ServiceError } from '@grpc/grpc-js';
import { RobotServiceClient } from '../../gen/platform/app/v1/robot_part.js';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { checkCredentialTransport, cloudTarget, type PartCredentials } from './credentials.js';
import { cloudReachable } from './reconnect.js';

/** The cloud refused the credentials themselves (wrong secret or key): worth saying so in the log. */
export class CredentialsRefusedError extends Error {
  constructor(cause: ServiceError) {
    super(`the cloud refused the machine credentials (wrong part secret or API key?): ${cause.details || cause.message}`);
    this.name = 'CredentialsRefusedError';
  }
}

const CHANNEL_OPTIONS = {
  // A cloud that vanishes without closing the connection is noticed within 15 s.
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  // After an outage the channel's own reconnect backoff (120 s at most by default) would keep failing
  // calls for a while after the cloud serves again; capped, the config watch finds it in time (reconnect.ts).
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 2000,
};

export class CloudLink {
  readonly robot: RobotServiceClient;
  private readonly auth: AuthServiceClient;
  private token?: { value: string; expiresAt: number };

  /** Throws InsecureCredentialsError (naming -allow-insecure-creds) before anything is sent. */
  constructor(
    readonly creds: PartCredentials,
    allowInsecure: boolean,
    private readonly timeoutMs = 10_000,
  ) {
    const target = cloudTarget(creds.appAddress);
    checkCredentialTransport(target, allowInsecure);
    const channel = target.tls ? credentials.createSsl() : credentials.createInsecure();
    this.auth = new AuthServiceClient(target.target, channel, CHANNEL_OPTIONS);
    this.robot = new RobotServiceClient(target.target, channel, CHANNEL_OPTIONS);
  }

  get partId(): string {
    return this.creds.partId;
  }

  /** Call metadata with a valid access token; throws CredentialsRefusedError for bad credentials. */
  async metadata(): Promise<Metadata> {
    if (!this.token || Date.now() > this.token.expiresAt) {
      const request = this.creds.secret
        ? { entity: this.creds.partId, credentials: { type: 'robot-secret', payload: this.creds.secret } }
        : { entity: this.creds.apiKey!.id, credentials: { type: 'api-key', payload: this.creds.apiKey!.key } };
      const res = await new Promise<{ accessToken: string; expiresInSeconds: number }>((resolve, reject) =>
        this.auth.authenticate(request, new Metadata(), { deadline: Date.now() + this.timeoutMs }, (err, r) => {
          if (!err) return resolve(r);
          reject(
            err.code === status.UNAUTHENTICATED || err.code === status.PERMISSION_DENIED || err.code === status.NOT_FOUND
              ? new CredentialsRefusedError(err)
              : err,
          );
        }),
      );
      // Renewed a minute early so that no call carries a token that expires on the way.
      this.token = { value: res.accessToken, expiresAt: Date.now() + Math.max(0, res.expiresInSeconds - 60) * 1000 };
    }
    const md = new Metadata();
    md.set('authorization', `Bearer ${this.token.value}`);
    return md;
  }

  /** Forgets the token after the cloud refused it (e.g. a restarted cloud with another signing secret). */
  refused(err: unknown): void {
    if ((err as { code?: number }).code === status.UNAUTHENTICATED) this.token = undefined;
  }

  /** A unary call on RobotService with a deadline. */
  async unary<Req, Res>(
    fn: (req: Req, md: Metadata, options: Partial<CallOptions>, cb: (err: ServiceError | null, res: Res) => void) => unknown,
    req: Req,
  ): Promise<Res> {
    const md = await this.metadata();
    try {
      const res = await new Promise<Res>((resolve, reject) =>
        fn.call(this.robot, req, md, { deadline: Date.now() + this.timeoutMs }, (err, res) => (err ? reject(err) : resolve(res))),
      );
      // Tells a config watch waiting to reconnect that the cloud serves again.
      cloudReachable();
      return res;
    } catch (err) {
      this.refused(err);
      throw err;
    }
  }

  close(): void {
    this.auth.close();
    this.robot.close();
  }
}
