// The registry of custom training scripts. A script is a versioned package (a tar archive, gzipped or
// not) with an entrypoint, owned by an organization and identified by (registry_item_id, version).
// Versions are immutable. Layout: <root>/registry/<org>/<item>/<version>/{manifest.json,package/}.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { x as extractTar } from 'tar';
import { alreadyExists, invalidArgument, notFound, resourceExhausted } from '../../core/serving/status-error.js';
import { syncDir as syncFolder, writeFileDurable } from '../../core/serving/durable-file.js';
import type { ModelFramework, ModelType } from './training-job.js';
import { scanPackage } from './package-scan.js';

export { scanPackage } from './package-scan.js';

export interface TrainingScript {
  organizationId: string;
  registryItemId: string;
  version: string;
  entrypoint: string;
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  description: string;
  packageSizeBytes: number;
  /** Bytes of its files once unpacked (what counts against the organization's quota). */
  unpackedBytes?: number;
  createdOn: string;
}

export interface TrainingScriptUpload {
  organizationId: string;
  registryItemId: string;
  version: string;
  entrypoint: string;
  package: Uint8Array;
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  description?: string;
}

// Below the cloud's 64 MiB gRPC message limit, leaving room for the rest of the request.
export const maxPackageBytes = 48 * 1024 * 1024;

/** Bounds of the registry (issue 27 finding 9); the cloud sets them from PLATFORM_TRAINING_SCRIPT_*. */
export interface RegistryLimits {
  /** Entries (files and folders) of one package. */
  maxEntries: number;
  /** Bytes of one package once unpacked. */
  maxUnpackedBytes: number;
  /** Script versions one organization keeps. */
  maxScriptsPerOrg: number;
  /** Unpacked bytes of all of one organization's script versions. */
  maxBytesPerOrg: number;
}

export const defaultRegistryLimits: RegistryLimits = {
  maxEntries: 10_000,
  maxUnpackedBytes: 512 * 2 ** 20,
  maxScriptsPerOrg: 100,
  maxBytesPerOrg: 2 * 2 ** 30,
};
// Item ids may carry a namespace ("acme:yolo-trainer"); both parts become folder names, so no slashes.
const itemIdRule = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const versionRule = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export function checkRegistryRef(registryItemId: string, version: string, versionField = 'version'): void {
  if (!itemIdRule.test(registryItemId)) {
    throw invalidArgument(
      `registry_item_id '${registryItemId}' must be 1-128 characters of letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
    );
  }
  if (!versionRule.test(version)) {
    throw invalidArgument(
      `${versionField} '${version}' must be 1-64 characters of letters, digits, '.', '_', '+' or '-', starting with a letter or digit (e.g. 1.2.0 or 2024-05-01T10-00-00)`,
    );
  }
}

function checkEntrypoint(entrypoint: string): void {
  const parts = entrypoint.split('/');
  if (!entrypoint || entrypoint.startsWith('/') || parts.some((p) => p === '..' || p === '' || p === '.')) {
    throw invalidArgument(`entrypoint '${entrypoint}' must be a relative path inside the package, without '..'`);
  }
}

export class TrainingScriptRegistry {
  private readonly folder: string;
  private readonly limits: RegistryLimits;
  /** One upload or delete at a time per organization, so that its quota is checked against settled state. */
  private readonly orgLocks = new Map<string, Promise<unknown>>();

  constructor(root: string, limits: Partial<RegistryLimits> = {}) {
    this.folder = join(root, 'registry');
    this.limits = { ...defaultRegistryLimits, ...limits };
  }

  private serialize<T>(org: string, work: () => Promise<T>): Promise<T> {
    const previous = this.orgLocks.get(org) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.orgLocks.set(org, settled);
    void settled.then(() => {
      if (this.orgLocks.get(org) === settled) this.orgLocks.delete(org);
    });
    return next;
  }

  private versionFolder(org: string, item: string, version: string): string {
    return join(this.folder, org, item, version);
  }

  async upload(upload: TrainingScriptUpload): Promise<TrainingScript> {
    checkRegistryRef(upload.registryItemId, upload.version);
    checkEntrypoint(upload.entrypoint);
    if (upload.package.length === 0) throw invalidArgument('package must be a non-empty tar archive');
    if (upload.package.length > maxPackageBytes) throw invalidArgument(`package must be at most ${maxPackageBytes} bytes`);
    return this.serialize(upload.organizationId, () => this.store(upload));
  }

  private async store(upload: TrainingScriptUpload): Promise<TrainingScript> {
    const target = this.versionFolder(upload.organizationId, upload.registryItemId, upload.version);
    if (await exists(target)) {
      throw alreadyExists(`training script ${upload.registryItemId} version ${upload.version} already exists; versions are immutable`);
    }
    const existing = await this.list(upload.organizationId);
    if (existing.length >= this.limits.maxScriptsPerOrg) {
      throw resourceExhausted(
        `organization ${upload.organizationId} already keeps ${existing.length} training script versions, the limit (PLATFORM_TRAINING_SCRIPTS_PER_ORG); delete some with DeleteTrainingScript`,
      );
    }
    const contents = await scanPackage(upload.package, this.limits);
    if (contents.others.length) throw invalidArgument(`package may contain only files and folders; links found: ${contents.others.slice(0, 10).join(', ')}`);
    const used = existing.reduce((sum, s) => sum + (s.unpackedBytes ?? s.packageSizeBytes), 0);
    if (used + contents.bytes > this.limits.maxBytesPerOrg) {
      throw resourceExhausted(
        `organization ${upload.organizationId} would keep ${used + contents.bytes} bytes of training scripts, more than its ${this.limits.maxBytesPerOrg}-byte quota (PLATFORM_TRAINING_SCRIPT_BYTES_PER_ORG_MB); delete some with DeleteTrainingScript`,
      );
    }
    const staging = join(this.folder, '.staging', randomUUID());
    await mkdir(join(staging, 'package'), { recursive: true });
    try {
      await this.extract(upload.package, staging);
      const entry = await stat(join(staging, 'package', upload.entrypoint)).catch(() => undefined);
      if (!entry?.isFile()) throw invalidArgument(`entrypoint '${upload.entrypoint}' is not a file in the package`);
      const script: TrainingScript = {
        organizationId: upload.organizationId,
        registryItemId: upload.registryItemId,
        version: upload.version,
        entrypoint: upload.entrypoint,
        modelType: upload.modelType,
        modelFramework: upload.modelFramework,
        description: upload.description ?? '',
        packageSizeBytes: upload.package.length,
        unpackedBytes: contents.bytes,
        createdOn: new Date().toISOString(),
      };
      await writeFileDurable(join(staging, 'manifest.json'), JSON.stringify(script, null, 1), 0o600);
      await mkdir(join(target, '..'), { recursive: true });
      if (await exists(target))
        throw alreadyExists(`training script ${upload.registryItemId} version ${upload.version} already exists; versions are immutable`);
      await rename(staging, target);
      await syncFolder(join(target, '..'));
      return script;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async extract(pkg: Uint8Array, staging: string): Promise<void> {
    const archive = join(staging, 'package.tar');
    await writeFile(archive, pkg);
    let total = 0;
    let entries = 0;
    const problems: string[] = [];
    try {
      await extractTar({
        file: archive,
        cwd: join(staging, 'package'),
        strict: true,
        // Links are the classic escape from an extraction folder; scripts do not need them.
        filter: (path, entry) => {
          const type = 'type' in entry ? entry.type : 'File';
          if (type !== 'File' && type !== 'OldFile' && type !== 'Directory') {
            problems.push(`${path} (${type})`);
            return false;
          }
          // scanPackage checked these bounds already; this holds them should the two readings differ.
          total += entry.size ?? 0;
          entries += 1;
          if (total > this.limits.maxUnpackedBytes || entries > this.limits.maxEntries) {
            problems.push(`${path} (past the package's bounds)`);
            return false;
          }
          return true;
        },
      });
    } catch (err) {
      if ((err as { code?: unknown }).code === 3) throw err;
      throw invalidArgument(`package must be a tar or tar.gz archive: ${(err as Error).message}`);
    } finally {
      await rm(archive, { force: true });
    }
    if (problems.length) throw invalidArgument(`package may contain only files and folders within its bounds; refused: ${problems.slice(0, 10).join(', ')}`);
  }

  async get(organizationId: string, registryItemId: string, version: string): Promise<TrainingScript & { packageFolder: string }> {
    checkRegistryRef(registryItemId, version, 'registry_item_version');
    const folder = this.versionFolder(organizationId, registryItemId, version);
    try {
      const script = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as TrainingScript;
      return { ...script, packageFolder: join(folder, 'package') };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw notFound(`no training script ${registryItemId} version ${version} in the registry of organization ${organizationId}`);
      }
      throw err;
    }
  }

  /** Removes one script version; NOT_FOUND when it does not exist. */
  async delete(organizationId: string, registryItemId: string, version: string): Promise<void> {
    checkRegistryRef(registryItemId, version);
    await this.serialize(organizationId, async () => {
      const folder = this.versionFolder(organizationId, registryItemId, version);
      if (!(await exists(join(folder, 'manifest.json')))) {
        throw notFound(`no training script ${registryItemId} version ${version} in the registry of organization ${organizationId}`);
      }
      // Out of the listing in one step (rename), then removed at leisure.
      const doomed = join(this.folder, '.staging', `deleted-${randomUUID()}`);
      await mkdir(join(this.folder, '.staging'), { recursive: true });
      await rename(folder, doomed);
      await syncFolder(join(folder, '..'));
      await rm(doomed, { recursive: true, force: true });
      await rmdir(join(folder, '..')).catch(() => undefined); // the item's folder, once empty
    });
  }

  async list(organizationId: string, registryItemId?: string): Promise<TrainingScript[]> {
    const orgFolder = join(this.folder, organizationId);
    const items = registryItemId ? [registryItemId] : await readdir(orgFolder).catch(() => [] as string[]);
    const scripts: TrainingScript[] = [];
    for (const item of items) {
      for (const version of await readdir(join(orgFolder, item)).catch(() => [] as string[])) {
        const manifest = await readFile(join(orgFolder, item, version, 'manifest.json'), 'utf8').catch(() => undefined);
        if (manifest) scripts.push(JSON.parse(manifest) as TrainingScript);
      }
    }
    return scripts.sort((a, b) => a.registryItemId.localeCompare(b.registryItemId) || a.createdOn.localeCompare(b.createdOn));
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
