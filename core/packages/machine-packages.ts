// The packages of the running config: installed before the resources are (re)built, substituted into the
// attributes that say ${packages.NAME}, and pruned once the new config runs. The order keeps the running
// version until the new one is ready: install (the old resources still run on the old folder), then
// reconfigure (a changed folder changes the resource's attributes, so exactly the resources that
// reference the package are rebuilt), then remove the versions nothing uses any more.
import { ConfigError } from '../../plugins/validation.js';
import type { MachineConfig } from '../config/machine-config.js';
import { referencedPackages, substitutePackages } from '../config/package-config.js';
import type { ResourceEntry } from '../config/resource-entry.js';
import { InsecureCredentialsError } from '../cloud-link/address.js';
import { linkSettingsOf } from '../cloud-link/link-settings.js';
import { CloudPackageSource, RefusedPackageSource } from './cloud-package-source.js';
import type { PackageSource } from './package-source.js';
import { PackageError, PackageStore, type InstalledPackage } from './package-store.js';

export interface PackageLog {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export class MachinePackages {
  private source?: PackageSource & { close?(): void };
  /** The credentials and address `source` was made for (JSON), so a config change with the same ones keeps it. */
  private sourceKey?: string;
  /** Installed folder per package name of the running config. */
  private installed = new Map<string, InstalledPackage>();
  /** Why a package of the running config is not installed, per name; the message names the package. */
  private errors = new Map<string, string>();
  /** Packages that failed only because the cloud could not be reached: worth another try later. */
  private unreachable = new Set<string>();
  /** Whether any config of this runtime listed packages: a machine that never did leaves the folder alone. */
  private listed = false;
  /** Whether the running config has an entry at "latest": the cloud may publish a newer version at any time. */
  private followsLatest = false;

  constructor(
    private readonly store: PackageStore,
    private readonly log: PackageLog,
    /** -allow-insecure-creds: whether the part's credentials may go in plaintext to a remote cloud. */
    private readonly allowInsecureCreds = false,
  ) {}

  /**
   * Installs every package of `config` (concurrently). Failures are kept for the resources that use them.
   * Resolves with whether any package's folder or error changed since the last install.
   */
  async install(config: MachineConfig): Promise<boolean> {
    // A channel to the cloud only for a config that lists packages, kept while the credentials stay the same.
    const settings = config.packages.length > 0 ? linkSettingsOf(config.cloud, this.allowInsecureCreds) : undefined;
    const key = settings && JSON.stringify(settings);
    if (key !== this.sourceKey) {
      this.source?.close?.();
      this.source = settings && this.sourceFor(settings);
      this.sourceKey = key;
    }
    this.listed ||= config.packages.length > 0;
    this.followsLatest = config.packages.some((entry) => entry.version === 'latest');
    const installed = new Map<string, InstalledPackage>();
    const errors = new Map<string, string>();
    const unreachable = new Set<string>();
    await Promise.all(
      config.packages.map(async (entry) => {
        try {
          const result = await this.store.install(entry, this.source);
          const before = this.installed.get(entry.name);
          if (before?.folder !== result.folder)
            this.log.info('package installed', { package: entry.name, id: entry.package, version: result.version, folder: result.folder });
          installed.set(entry.name, result);
        } catch (err) {
          const message = err instanceof PackageError ? err.message : `package ${entry.name} (${entry.package}@${entry.version}): ${(err as Error).message}`;
          if (err instanceof PackageError && err.reason === 'offline') unreachable.add(entry.name);
          // A machine that runs a version of this package keeps running it when the new one cannot be
          // installed (checksum mismatch, unknown version, disk full): a bad update must not stop a
          // working model. The error is logged; the resources stay on the running version.
          const running = this.installed.get(entry.name);
          if (running && running.package === entry.package) {
            installed.set(entry.name, running);
            this.log.error('package update not installed; the running version stays', { package: entry.name, running: running.version, error: message });
            return;
          }
          errors.set(entry.name, message);
          this.log.error('package not installed', { package: entry.name, error: message });
        }
      }),
    );
    const changed =
      installed.size !== this.installed.size ||
      [...installed].some(([name, p]) => this.installed.get(name)?.folder !== p.folder) ||
      errors.size !== this.errors.size;
    this.installed = installed;
    this.errors = errors;
    this.unreachable = unreachable;
    return changed;
  }

  private sourceFor(settings: NonNullable<ReturnType<typeof linkSettingsOf>>): PackageSource & { close?(): void } {
    try {
      return new CloudPackageSource(settings);
    } catch (err) {
      // Plaintext to a remote host without -allow-insecure-creds: nothing is dialled; every package that is
      // not installed yet fails with this reason, logged and shown on the resources that use it.
      if (!(err instanceof InsecureCredentialsError)) throw err;
      this.log.error('packages cannot be downloaded', { error: err.message });
      return new RefusedPackageSource(err.message);
    }
  }

  /**
   * When to install the running config's packages again, in ms, or undefined for never: after `retryMs`
   * when a package is missing only because the cloud was unreachable, after `latestMs` when an entry
   * follows "latest" (a model trained again is published without a config change). An installed pinned
   * version never changes, so a config of pinned versions that all installed is not checked again.
   */
  nextCheckMs(intervals: { retryMs: number; latestMs: number }): number | undefined {
    const due = [this.unreachable.size > 0 ? intervals.retryMs : undefined, this.followsLatest ? intervals.latestMs : undefined];
    const delays = due.filter((ms): ms is number => ms !== undefined);
    return delays.length ? Math.min(...delays) : undefined;
  }

  /**
   * Replaces ${packages.NAME} in each entry's attributes by the installed folder (the kernel's entrySubstitution
   * extension point, wired in core/server/compose.ts). A reference to a package that failed, or that the config does not list, is an
   * error of that resource naming the package and the reason, as GetMachineStatus shows it.
   */
  prepare(entries: ResourceEntry[]): void {
    const folders = Object.fromEntries([...this.installed].map(([name, p]) => [name, p.folder]));
    for (const entry of entries) {
      if (entry.error) continue;
      const names = [...referencedPackages(entry.attributes)];
      if (names.length === 0) continue;
      const failed = names.find((name) => this.errors.has(name));
      if (failed) {
        entry.error = new ConfigError(`${entry.path}.attributes`, this.errors.get(failed)!);
        continue;
      }
      try {
        entry.attributes = substitutePackages(entry.attributes, folders, `${entry.path}.attributes`);
      } catch (err) {
        entry.error = new ConfigError('', `${(err as Error).message}; list it in "packages"`);
      }
    }
  }

  /** Removes every installed version the running config does not use. */
  async prune(): Promise<void> {
    if (!this.listed) return;
    try {
      const removed = await this.store.prune([...this.installed.values()]);
      if (removed.length) this.log.info('unused package versions removed', { folders: removed });
    } catch (err) {
      this.log.error('cannot remove unused package versions', { error: (err as Error).message });
    }
  }

  close(): void {
    this.source?.close?.();
    this.source = undefined;
    this.sourceKey = undefined;
  }
}
