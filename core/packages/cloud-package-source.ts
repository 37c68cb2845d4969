// The cloud as a PackageSource: PackageService (proto/platform/app/packages/v1) called as this machine
// part through the machine's one CloudLink (core/cloud-link/), with the credentials of the config's
// `cloud` section (a local config's, or the credentials file's that an online machine's served config
// carries). The link refuses plaintext to a remote host without -allow-insecure-creds, authenticates and
// renews the token.
import { status, type ServiceError } from '@grpc/grpc-js';
import { PackageServiceClient, type GetPackageResponse } from '../../gen/platform/app/packages/v1/packages.js';
import { CloudLink } from '../cloud-link/cloud-link.js';
import type { CloudLinkSettings } from '../cloud-link/link-settings.js';
import { PackageSourceError, type PackageRelease, type PackageSource } from './package-source.js';

const CALL_DEADLINE_MS = 30_000;
/** A file download may be large: its deadline is generous, and a stalled one still ends. */
const DOWNLOAD_DEADLINE_MS = 30 * 60_000;

/** Codes that mean the cloud could not be asked, not that it said no: the store then uses what is installed. */
const unreachable = new Set([status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.CANCELLED, status.UNKNOWN, status.INTERNAL]);

export class CloudPackageSource implements PackageSource {
  private readonly link: CloudLink;

  /** Throws InsecureCredentialsError (naming -allow-insecure-creds) before anything is dialled. */
  constructor(readonly settings: CloudLinkSettings) {
    this.link = new CloudLink(settings, { timeoutMs: CALL_DEADLINE_MS });
  }

  close(): void {
    this.link.close();
  }

  async resolve(pkg: string, version: string): Promise<PackageRelease> {
    const packages = this.link.client(PackageServiceClient);
    let response: GetPackageResponse;
    try {
      response = await this.link.call(
        (md, options) =>
          new Promise<GetPackageResponse>((resolve, reject) =>
            packages.getPackage({ packageId: pkg, version, type: 'ml_model' }, md, options, (err, res) => (err ? reject(err) : resolve(res))),
          ),
      );
    } catch (err) {
      throw this.sourceError(err);
    }
    const info = response.package;
    if (!info) throw new PackageSourceError('unreachable', `the cloud answered no package for ${pkg}@${version}`);
    return { version: info.version, files: info.files.map((f) => ({ name: f.name, sha256: f.sha256, size: f.sizeBytes })) };
  }

  async *download(pkg: string, version: string, file: string): AsyncIterable<Uint8Array> {
    let md;
    try {
      md = await this.link.metadata();
    } catch (err) {
      throw this.sourceError(err);
    }
    const call = this.link
      .client(PackageServiceClient)
      .downloadPackageFile({ packageId: pkg, version, fileName: file }, md, { deadline: Date.now() + DOWNLOAD_DEADLINE_MS });
    try {
      for await (const message of call) yield (message as { chunk: Uint8Array }).chunk;
    } catch (err) {
      this.link.refused(err);
      throw this.sourceError(err);
    } finally {
      call.cancel();
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

/** A source that never dials: the link was refused, and every resolve says why (the store keeps what is installed). */
export class RefusedPackageSource implements PackageSource {
  constructor(readonly reason: string) {}
  resolve(): Promise<PackageRelease> {
    return Promise.reject(new PackageSourceError('refused', this.reason));
  }
  // eslint-disable-next-line require-yield
  async *download(): AsyncIterable<Uint8Array> {
    throw new PackageSourceError('refused', this.reason);
  }
}
