// The registry of custom training scripts. A script is a versioned package (a tar archive, gzipped or
// not) with an entrypoint, owned by an organization and identified by (registry_item_id, version).
// Versions are immutable. Layout: <root>/registry/<org>/<item>/<version>/{manifest.json,package/}.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { x as extractTar } from 'tar';
import { alreadyExists, invalidArgument, notFound } from '../../core/shared/status-error.js';
import { syncDir as syncFolder, writeFileDurable } from '../../core/shared/durable-file.js';
import type { ModelFramework, ModelType } from './training-job.js';

export interface TrainingScript {
  organizationId: string;
  registryItemId: string;
  version: string;
  entrypoint: string;
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  description: string;
  packageSizeBytes: number;
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
const maxExtractedBytes = 512 * 1024 * 1024;
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

  constructor(root: string) {
    this.folder = join(root, 'registry');
  }

  private versionFolder(org: string, item: string, version: string): string {
    return join(this.folder, org, item, version);
  }

  async upload(upload: TrainingScriptUpload): Promise<TrainingScript> {
    checkRegistryRef(upload.registryItemId, upload.version);
    checkEntrypoint(upload.entrypoint);
    if (upload.package.length === 0) throw invalidArgument('package must be a non-empty tar archive');
    if (upload.package.length > maxPackageBytes) throw invalidArgument(`package must be at most ${maxPackageBytes} bytes`);
    const target = this.versionFolder(upload.organizationId, upload.registryItemId, upload.version);
    if (await exists(target)) {
      throw alreadyExists(`training script ${upload.registryItemId} version ${upload.version} already exists; versions are immutable`);
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
          total += entry.size ?? 0;
          if (total > maxExtractedBytes) throw invalidArgument(`package unpacks to more than ${maxExtractedBytes} bytes`);
          return true;
        },
      });
    } catch (err) {
      if ((err as { code?: unknown }).code === 3) throw err;
      throw invalidArgument(`package must be a tar or tar.gz archive: ${(err as Error).message}`);
    } finally {
      await rm(archive, { force: true });
    }
    if (problems.length) throw invalidArgument(`package may contain only files and folders; links found: ${problems.join(', ')}`);
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
