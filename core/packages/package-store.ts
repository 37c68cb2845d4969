// Installs packages under a root folder (~/.platform/packages by default):
//   <root>/<org>/<model>/<version>/          the files, verified
//   <root>/<org>/<model>/<version>/.release.json   written last: a folder without it is not installed
// A release is downloaded into a temporary folder beside it, every file's sha256 checked and fsynced, then
// the folder is renamed into place, so a crash or a bad download never leaves a half-installed version and
// the version in use keeps running until the new one is ready. Offline, what is installed is used.
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { syncDir, writeFileDurable } from '../serving/durable-file.js';
import type { PackageEntry } from '../config/package-config.js';
import { PackageSourceError, type PackageRelease, type PackageSource } from './package-source.js';
import { PackageError } from '../serving/errors.js';
export { PackageError };

export const defaultPackagesRoot = () => process.env.PLATFORM_PACKAGES_DIR ?? join(homedir(), '.platform', 'packages');

export interface InstalledPackage {
  name: string;
  package: string;
  version: string;
  folder: string;
}

interface ReleaseRecord extends PackageRelease {
  installedAt: string;
}

export class PackageStore {
  constructor(private readonly root: string = defaultPackagesRoot()) {}

  folderOf(pkg: string, version: string): string {
    return join(this.root, ...pkg.split('/'), version);
  }

  /** Installs (or finds installed) the entry's release and returns its folder. */
  async install(entry: PackageEntry, source: PackageSource | undefined): Promise<InstalledPackage> {
    const label = `package ${entry.name} (${entry.package}@${entry.version})`;
    let release: PackageRelease;
    try {
      if (!source) throw new PackageSourceError('unreachable', 'the machine is offline');
      release = await source.resolve(entry.package, entry.version);
    } catch (err) {
      if (err instanceof PackageSourceError && err.reason === 'not-found') throw new PackageError(entry.name, 'not-found', `${label}: ${err.message}`);
      // Offline (or the cloud failed): use what is installed.
      const installed = await this.installedVersion(entry);
      if (installed) return installed;
      throw new PackageError(entry.name, 'offline', `${label}: not installed and cannot be downloaded (${(err as Error).message})`);
    }
    const folder = this.folderOf(entry.package, release.version);
    if (await this.record(folder)) return { name: entry.name, package: entry.package, version: release.version, folder };
    await this.download(entry, release, source!, folder, label);
    return { name: entry.name, package: entry.package, version: release.version, folder };
  }

  private async download(entry: PackageEntry, release: PackageRelease, source: PackageSource, folder: string, label: string): Promise<void> {
    const temp = `${folder}.partial-${process.pid}-${Date.now()}`;
    try {
      await mkdir(temp, { recursive: true });
      for (const file of release.files) {
        if (file.name.split('/').some((part) => part === '..' || part === '') || file.name.startsWith('/')) {
          throw new PackageError(entry.name, 'checksum', `${label}: file name ${JSON.stringify(file.name)} is not a plain relative path`);
        }
        const target = join(temp, ...file.name.split('/'));
        await mkdir(join(target, '..'), { recursive: true });
        const hash = createHash('sha256');
        const handle = await open(target, 'w');
        let size = 0;
        try {
          for await (const chunk of source.download(entry.package, release.version, file.name)) {
            hash.update(chunk);
            size += chunk.byteLength;
            await handle.write(chunk);
          }
          await handle.sync();
        } finally {
          await handle.close();
        }
        const digest = hash.digest('hex');
        if (digest !== file.sha256 || size !== file.size) {
          throw new PackageError(
            entry.name,
            'checksum',
            `${label}: ${file.name} has sha256 ${digest} (${size} bytes); the release says ${file.sha256} (${file.size} bytes)`,
          );
        }
      }
      const record: ReleaseRecord = { ...release, installedAt: new Date().toISOString() };
      await writeFileDurable(join(temp, '.release.json'), JSON.stringify(record));
      await rm(folder, { recursive: true, force: true });
      await rename(temp, folder);
      await syncDir(join(folder, '..'));
    } catch (err) {
      await rm(temp, { recursive: true, force: true }).catch(() => undefined);
      await this.removeIfEmpty(join(folder, '..'));
      if (err instanceof PackageError) throw err;
      if (err instanceof PackageSourceError)
        throw new PackageError(entry.name, err.reason === 'not-found' ? 'not-found' : 'offline', `${label}: ${err.message}`);
      throw new PackageError(entry.name, 'disk', `${label}: cannot be installed in ${this.root}: ${(err as Error).message}`);
    }
  }

  private async record(folder: string): Promise<ReleaseRecord | undefined> {
    try {
      return JSON.parse(await readFile(join(folder, '.release.json'), 'utf8')) as ReleaseRecord;
    } catch {
      return undefined;
    }
  }

  /** The installed version an entry may use offline: its own version, or for "latest" the newest installed. */
  private async installedVersion(entry: PackageEntry): Promise<InstalledPackage | undefined> {
    const base = join(this.root, ...entry.package.split('/'));
    const versions = entry.version === 'latest' ? await readdir(base).catch(() => [] as string[]) : [entry.version];
    let best: { version: string; at: string } | undefined;
    for (const version of versions) {
      const record = await this.record(join(base, version));
      if (record && (!best || record.installedAt > best.at)) best = { version, at: record.installedAt };
    }
    return best && { name: entry.name, package: entry.package, version: best.version, folder: join(base, best.version) };
  }

  /** Removes every installed version that `inUse` does not list (and leftovers of failed downloads). */
  async prune(inUse: InstalledPackage[]): Promise<string[]> {
    const keep = new Set(inUse.map((p) => p.folder));
    const removed: string[] = [];
    for (const org of await readdir(this.root).catch(() => [] as string[])) {
      for (const model of await readdir(join(this.root, org)).catch(() => [] as string[])) {
        for (const version of await readdir(join(this.root, org, model)).catch(() => [] as string[])) {
          const folder = join(this.root, org, model, version);
          if (keep.has(folder)) continue;
          await rm(folder, { recursive: true, force: true });
          removed.push(folder);
        }
        await this.removeIfEmpty(join(this.root, org, model));
      }
    }
    return removed;
  }

  /** Removes a model folder, and then its organization folder, once no version is left in it. */
  private async removeIfEmpty(modelFolder: string): Promise<void> {
    for (const folder of [modelFolder, join(modelFolder, '..')]) {
      if (folder === this.root || !folder.startsWith(this.root)) return;
      if (
        !(await rmdir(folder).then(
          () => true,
          () => false,
        ))
      )
        return;
    }
  }
}
