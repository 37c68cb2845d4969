// The registry of custom training scripts. A script is a versioned package (a tar archive, gzipped or
// not) with an entrypoint, owned by an organization and identified by (registry_item_id, version).
// Versions are immutable. A version is a row of training_scripts (training-tables.ts) and its archive
// a blob, mltraining/scripts/<org>/<item>/<version>/<uuid>.tar, in the cloud's BlobStore (S3 in the
// scale-out mode). An upload is unpacked once into a temp folder to check it (bounds, links, the
// entrypoint); a run unpacks the archive again, with the same checks, into its job folder (stage()).
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x as extractTar } from 'tar';
import { alreadyExists, invalidArgument, notFound, resourceExhausted } from '../../core/serving/status-error.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import type { ModelFramework, ModelType } from './training-job.js';
import { scanPackage } from './package-scan.js';
import { trainingBlobPrefix } from './training-tables.js';

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

const duplicate = (item: string, version: string) => alreadyExists(`training script ${item} version ${version} already exists; versions are immutable`);

export class TrainingScriptRegistry {
  private readonly limits: RegistryLimits;
  /** One upload or delete at a time per organization in this process (the transaction settles it across processes). */
  private readonly orgLocks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: StoreWithBlobs,
    limits: Partial<RegistryLimits> = {},
  ) {
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

  async upload(upload: TrainingScriptUpload): Promise<TrainingScript> {
    checkRegistryRef(upload.registryItemId, upload.version);
    checkEntrypoint(upload.entrypoint);
    if (upload.package.length === 0) throw invalidArgument('package must be a non-empty tar archive');
    if (upload.package.length > maxPackageBytes) throw invalidArgument(`package must be at most ${maxPackageBytes} bytes`);
    return this.serialize(upload.organizationId, () => this.save(upload));
  }

  /** The organization's script count and unpacked bytes; throws when `adding` more would pass a limit. */
  private checkQuota(org: string, count: number, used: number, adding: number | undefined): void {
    if (count >= this.limits.maxScriptsPerOrg) {
      throw resourceExhausted(
        `organization ${org} already keeps ${count} training script versions, the limit (PLATFORM_TRAINING_SCRIPTS_PER_ORG); delete some with DeleteTrainingScript`,
      );
    }
    if (adding !== undefined && used + adding > this.limits.maxBytesPerOrg) {
      throw resourceExhausted(
        `organization ${org} would keep ${used + adding} bytes of training scripts, more than its ${this.limits.maxBytesPerOrg}-byte quota (PLATFORM_TRAINING_SCRIPT_BYTES_PER_ORG_MB); delete some with DeleteTrainingScript`,
      );
    }
  }

  private async usage(org: string): Promise<{ count: number; used: number }> {
    const rows = await this.store.query('SELECT count(*) AS n, coalesce(sum(unpacked_bytes), 0) AS bytes FROM training_scripts WHERE organization_id = ?', [
      org,
    ]);
    return { count: Number(rows[0].n), used: Number(rows[0].bytes) };
  }

  private async save(upload: TrainingScriptUpload): Promise<TrainingScript> {
    const org = upload.organizationId;
    const ref = [org, upload.registryItemId, upload.version];
    const exists = 'SELECT 1 FROM training_scripts WHERE organization_id = ? AND registry_item_id = ? AND version = ?';
    if ((await this.store.query(exists, ref)).length) throw duplicate(upload.registryItemId, upload.version);
    const before = await this.usage(org);
    this.checkQuota(org, before.count, before.used, undefined);
    const contents = await scanPackage(upload.package, this.limits);
    if (contents.others.length) throw invalidArgument(`package may contain only files and folders; links found: ${contents.others.slice(0, 10).join(', ')}`);
    this.checkQuota(org, before.count, before.used, contents.bytes);
    const staging = await mkdtemp(join(tmpdir(), 'platform-script-'));
    try {
      await this.extract(upload.package, staging);
      const entry = await stat(join(staging, 'package', upload.entrypoint)).catch(() => undefined);
      if (!entry?.isFile()) throw invalidArgument(`entrypoint '${upload.entrypoint}' is not a file in the package`);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    const script: TrainingScript = {
      organizationId: org,
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
    const blobKey = `${trainingBlobPrefix}scripts/${org}/${upload.registryItemId}/${upload.version}/${randomUUID()}.tar`;
    await this.store.blobs.put(blobKey, upload.package);
    try {
      // Checked again with the insert: another process may have uploaded meanwhile.
      await this.store.transact(async (tx) => {
        if ((await tx.query(exists, ref)).length) throw duplicate(upload.registryItemId, upload.version);
        const rows = await tx.query('SELECT count(*) AS n, coalesce(sum(unpacked_bytes), 0) AS bytes FROM training_scripts WHERE organization_id = ?', [org]);
        this.checkQuota(org, Number(rows[0].n), Number(rows[0].bytes), contents.bytes);
        await tx.execute('INSERT INTO training_scripts VALUES (?, ?, ?, ?, ?, ?, ?)', [
          org,
          upload.registryItemId,
          upload.version,
          new Date(script.createdOn),
          contents.bytes,
          blobKey,
          JSON.stringify(script),
        ]);
      });
    } catch (err) {
      await this.store.blobs.delete(blobKey).catch(() => undefined);
      throw err;
    }
    return script;
  }

  /** Unpacks an archive into <into>/package, taking only files and folders within the bounds. */
  private async extract(pkg: Uint8Array, into: string): Promise<void> {
    const archive = join(into, 'package.tar');
    await mkdir(join(into, 'package'), { recursive: true });
    await writeFile(archive, pkg, { mode: 0o600 });
    let total = 0;
    let entries = 0;
    const problems: string[] = [];
    try {
      await extractTar({
        file: archive,
        cwd: join(into, 'package'),
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

  async get(organizationId: string, registryItemId: string, version: string): Promise<TrainingScript & { blobKey: string }> {
    checkRegistryRef(registryItemId, version, 'registry_item_version');
    const rows = await this.store.query('SELECT script, blob_key FROM training_scripts WHERE organization_id = ? AND registry_item_id = ? AND version = ?', [
      organizationId,
      registryItemId,
      version,
    ]);
    if (!rows.length) throw notFound(`no training script ${registryItemId} version ${version} in the registry of organization ${organizationId}`);
    return { ...(JSON.parse(String(rows[0].script)) as TrainingScript), blobKey: String(rows[0].blob_key) };
  }

  /** Unpacks the script's package into `folder` (for a run), with the checks of an upload. */
  async stage(script: { blobKey: string; registryItemId: string; version: string }, folder: string): Promise<void> {
    const pkg = await this.store.blobs.get(script.blobKey);
    if (!pkg) throw new Error(`the package of training script ${script.registryItemId} version ${script.version} is missing from the blob store`);
    const staging = await mkdtemp(join(tmpdir(), 'platform-script-'));
    try {
      await this.extract(pkg, staging);
      await mkdir(folder, { recursive: true });
      await cp(join(staging, 'package'), folder, { recursive: true });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Removes one script version; NOT_FOUND when it does not exist. */
  async delete(organizationId: string, registryItemId: string, version: string): Promise<void> {
    checkRegistryRef(registryItemId, version);
    await this.serialize(organizationId, async () => {
      const ref = [organizationId, registryItemId, version];
      const keys = await this.store.transact(async (tx) => {
        const rows = await tx.query('SELECT blob_key FROM training_scripts WHERE organization_id = ? AND registry_item_id = ? AND version = ?', ref);
        await tx.execute('DELETE FROM training_scripts WHERE organization_id = ? AND registry_item_id = ? AND version = ?', ref);
        return rows.map((r) => String(r.blob_key));
      });
      if (!keys.length) throw notFound(`no training script ${registryItemId} version ${version} in the registry of organization ${organizationId}`);
      // The row is gone first: a crash here leaves an archive that nothing names, never a row without one.
      for (const key of keys) await this.store.blobs.delete(key).catch(() => undefined);
    });
  }

  async list(organizationId: string, registryItemId?: string): Promise<TrainingScript[]> {
    const rows = registryItemId
      ? await this.store.query('SELECT script FROM training_scripts WHERE organization_id = ? AND registry_item_id = ?', [organizationId, registryItemId])
      : await this.store.query('SELECT script FROM training_scripts WHERE organization_id = ?', [organizationId]);
    return rows
      .map((r) => JSON.parse(String(r.script)) as TrainingScript)
      .sort((a, b) => a.registryItemId.localeCompare(b.registryItemId) || a.createdOn.localeCompare(b.createdOn));
  }
}
