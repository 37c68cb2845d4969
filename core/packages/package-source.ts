// Where packages come from. The runtime sees only this interface; the cloud implementation (download with
// the part's credentials) plugs in where the online mode is wired, and tests use an in-memory one.
import { PackageSourceError } from '../serving/errors.js';
export { PackageSourceError };

export interface PackageFile {
  name: string;
  sha256: string;
  size: number;
}

export interface PackageRelease {
  /** The concrete version ("latest" resolved). */
  version: string;
  files: PackageFile[];
}

export interface PackageSource {
  /** The release of `<org>/<model>` at a version or "latest". Throws PackageSourceError('not-found') for an unknown package or version. */
  resolve(pkg: string, version: string): Promise<PackageRelease>;
  /** The bytes of one file of a release. */
  download(pkg: string, version: string, file: string): AsyncIterable<Uint8Array>;
}
