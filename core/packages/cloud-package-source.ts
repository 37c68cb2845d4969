// The cloud as a PackageSource: PackageService (proto/platform/app/packages/v1) called as this machine
// part, with the credentials of the config's `cloud` section (a local config's, or the credentials file's
// that an online machine's served config carries). The token comes from AuthService/Authenticate
// (robot-secret, or the machine's API key) and is renewed before it expires or when refused.
import { ChannelCredentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { PackageServiceClient, type GetPackageResponse } from '../../gen/platform/app/packages/v1/packages.js';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { cloudTarget } from '../online/credentials.js';
import type { MachineConfig } from '../shared/machine-config.js';
import { PackageSourceError, type PackageRelease, type PackageSource } from './package-source.js';

const CALL_DEADLINE_MS = 30_000;
/** A file download may be large: its deadline is generous, and a stalled one still ends. */
const DOWNLOAD_DEADLINE_MS = 30 * 60_000;

type CloudSection = NonNullable<MachineConfig['cloud']>;

/** Codes that mean the cloud could not be asked, not that it said no: the store then uses what is installed. */
const unreachable = new Set([status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.CANCELLED, status.UNKNOWN, status.INTERNAL]);

export class CloudPackageSource implements PackageSource {
  private readonly packages: PackageServiceClient;
  private readonly auth: AuthServiceClient;
  private token?: { value: string; expiresAt: number };

  constructor(private readonly cloud: CloudSection & { app_address: string }) {
    const { target, tls } = cloudTarget(cloud.app_address);
    const credentials = tls ? ChannelCredentials.createSsl() : ChannelCredentials.createInsecure();
    this.packages = new PackageServiceClient(target, credentials);
    this.auth = new AuthServiceClient(target, credentials);
  }

  /** A source for a config's `cloud` section; none without an app_address (the machine is offline). */
  static fromConfig(cloud: MachineConfig['cloud']): CloudPackageSource | undefined {
    return cloud?.app_address ? new CloudPackageSource({ ...cloud, app_address: cloud.app_address }) : undefined;
  }

  /** The same credentials and address: the source can be kept across a config change. */
  sameAs(cloud: MachineConfig['cloud']): boolean {
    return JSON.stringify(cloud ?? null) === JSON.stringify(this.cloud);
  }

  close(): void {
    this.packages.close();
    this.auth.close();
  }

  async resolve(pkg: string, version: string): Promise<PackageRelease> {
    const response = await this.withToken(
      (md) =>
        new Promise<GetPackageResponse>((resolve, reject) =>
          this.packages.getPackage({ packageId: pkg, version, type: 'ml_model' }, md, { deadline: Date.now() + CALL_DEADLINE_MS }, (err, res) =>
            err ? reject(err) : resolve(res),
          ),
        ),
    );
    const info = response.package;
    if (!info) throw new PackageSourceError('unreachable', `the cloud answered no package for ${pkg}@${version}`);
    return { version: info.version, files: info.files.map((f) => ({ name: f.name, sha256: f.sha256, size: f.sizeBytes })) };
  }

  async *download(pkg: string, version: string, file: string): AsyncIterable<Uint8Array> {
    const md = await this.withToken(async (m) => m);
    const call = this.packages.downloadPackageFile({ packageId: pkg, version, fileName: file }, md, { deadline: Date.now() + DOWNLOAD_DEADLINE_MS });
    try {
      for await (const message of call) yield (message as { chunk: Uint8Array }).chunk;
    } catch (err) {
      throw this.sourceError(err);
    } finally {
      call.cancel();
    }
  }

  private async authenticate(): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    const credentials = this.cloud.secret
      ? { entity: this.cloud.id, credentials: { type: 'robot-secret', payload: this.cloud.secret } }
      : { entity: this.cloud.api_key!.id, credentials: { type: 'api-key', payload: this.cloud.api_key!.key } };
    const response = await new Promise<{ accessToken: string; expiresInSeconds: number }>((resolve, reject) =>
      this.auth.authenticate(credentials, new Metadata(), { deadline: Date.now() + CALL_DEADLINE_MS }, (err, res) => (err ? reject(err) : resolve(res))),
    );
    const ttlMs = response.expiresInSeconds * 1000;
    this.token = { value: response.accessToken, expiresAt: Date.now() + Math.max(ttlMs - 60_000, ttlMs / 2) };
    return this.token.value;
  }

  /** Runs a call with a bearer token; a refused token is renewed once. gRPC errors become PackageSourceErrors. */
  private async withToken<T>(run: (md: Metadata) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const md = new Metadata();
        md.set('authorization', `Bearer ${await this.authenticate()}`);
        return await run(md);
      } catch (err) {
        if ((err as ServiceError).code === status.UNAUTHENTICATED && attempt === 0 && this.token) {
          this.token = undefined;
          continue;
        }
        throw this.sourceError(err);
      }
    }
  }

  private sourceError(err: unknown): Error {
    if (err instanceof PackageSourceError) return err;
    const e = err as ServiceError;
    if (e.code === status.NOT_FOUND) return new PackageSourceError('not-found', e.details || e.message);
    if (e.code !== undefined && !unreachable.has(e.code)) return new PackageSourceError('refused', `the cloud refused: ${e.details || e.message}`);
    return new PackageSourceError('unreachable', e.details || e.message);
  }
}
