// Versioned model artefacts written by finished jobs: <root>/models/<org>/<artefact id>/ holds the
// files (model.onnx, labels.txt, metrics.json for built-in jobs; whatever a custom script wrote) and
// manifest.json. An artefact outlives the job that made it: deleting a job keeps its model.
import { randomUUID } from 'node:crypto';
import { copyFile, lstat, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { failedPrecondition, notFound } from '../../core/serving/status-error.js';
import { syncDir as syncFolder, writeFileDurable } from '../../core/serving/durable-file.js';
import type { ModelFramework, ModelType } from './training-job.js';

export interface ModelArtefactFile {
  name: string;
  sizeBytes: number;
}

export interface ModelArtefact {
  id: string;
  organizationId: string;
  modelName: string;
  modelVersion: string;
  modelType?: ModelType;
  modelFramework?: ModelFramework;
  trainingJobId: string;
  files: ModelArtefactFile[];
  labels: string[];
  validationMetrics: Record<string, number>;
  createdOn: string;
}

export type NewModelArtefact = Omit<ModelArtefact, 'id' | 'files' | 'labels' | 'createdOn'>;

/** Guesses the framework from the files a custom script wrote. */
export function frameworkOf(files: string[]): ModelFramework | undefined {
  if (files.some((f) => f.endsWith('.onnx'))) return 'ONNX';
  if (files.some((f) => f.endsWith('.tflite'))) return 'TFLITE';
  if (files.some((f) => /\.(pt|pth|torchscript)$/.test(f))) return 'PYTORCH';
  if (files.some((f) => f.endsWith('saved_model.pb') || f.endsWith('.h5') || f.endsWith('.keras'))) return 'TENSORFLOW';
  return undefined;
}

async function listFiles(folder: string, base = folder): Promise<ModelArtefactFile[]> {
  const found: ModelArtefactFile[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const full = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...(await listFiles(full, base)));
    else if (entry.isFile()) found.push({ name: relative(base, full).split(sep).join('/'), sizeBytes: (await stat(full)).size });
  }
  return found;
}

/**
 * Copies only regular files and folders. The output folder was written by a (possibly hostile)
 * trainer: a symbolic link in it would make the cloud, reading with its own rights, copy a file of the
 * host (say <data-dir>/token-secret) into the artefact, and a FIFO would block the copy. Those are
 * skipped, and returned so the run can log them.
 */
export async function copyRegularTree(from: string, to: string, skipped: string[] = [], base = from): Promise<string[]> {
  if (!(await lstat(from)).isDirectory()) throw failedPrecondition('the model output folder was replaced by something that is not a folder');
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const kind = await lstat(source);
    if (kind.isDirectory()) await copyRegularTree(source, join(to, entry.name), skipped, base);
    else if (kind.isFile()) await copyFile(source, join(to, entry.name));
    else skipped.push(relative(base, source).split(sep).join('/'));
  }
  return skipped;
}

export class ModelArtefactStore {
  private readonly folder: string;
  private readonly artefacts = new Map<string, ModelArtefact>();

  constructor(root: string) {
    this.folder = join(root, 'models');
  }

  async load(): Promise<void> {
    for (const org of await readdir(this.folder).catch(() => [] as string[])) {
      if (org.startsWith('.')) continue;
      for (const id of await readdir(join(this.folder, org)).catch(() => [] as string[])) {
        const text = await readFile(join(this.folder, org, id, 'manifest.json'), 'utf8').catch(() => undefined);
        if (!text) continue; // an artefact whose manifest never landed was not reported as stored
        const artefact = JSON.parse(text) as ModelArtefact;
        this.artefacts.set(artefact.id, artefact);
      }
    }
  }

  /** Copies a trainer's output folder in as a new artefact (durable once this resolves). */
  async add(outputFolder: string, meta: NewModelArtefact, skipped: string[] = []): Promise<ModelArtefact> {
    const id = randomUUID();
    const staging = join(this.folder, '.staging', id);
    await mkdir(staging, { recursive: true });
    try {
      await copyRegularTree(outputFolder, join(staging, 'files'), skipped);
      const files = (await listFiles(join(staging, 'files'))).sort((a, b) => a.name.localeCompare(b.name));
      const labelsText = await readFile(join(staging, 'files', 'labels.txt'), 'utf8').catch(() => '');
      const artefact: ModelArtefact = {
        ...meta,
        id,
        files,
        labels: labelsText
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean),
        createdOn: new Date().toISOString(),
      };
      await writeFileDurable(join(staging, 'manifest.json'), JSON.stringify(artefact, null, 1), 0o600);
      const target = join(this.folder, meta.organizationId, id);
      await mkdir(join(target, '..'), { recursive: true });
      await rename(staging, target);
      await syncFolder(join(target, '..'));
      this.artefacts.set(id, artefact);
      return artefact;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  list(organizationId: string, modelName?: string): ModelArtefact[] {
    return [...this.artefacts.values()]
      .filter((a) => a.organizationId === organizationId && (!modelName || a.modelName === modelName))
      .sort((a, b) => a.modelName.localeCompare(b.modelName) || a.createdOn.localeCompare(b.createdOn));
  }

  find(organizationId: string, modelName: string, modelVersion: string): ModelArtefact | undefined {
    return this.list(organizationId, modelName).find((a) => a.modelVersion === modelVersion);
  }

  /** The path of one file of an artefact; NOT_FOUND when the model, version or file does not exist. */
  filePath(organizationId: string, modelName: string, modelVersion: string, fileName: string): string {
    const artefact = this.find(organizationId, modelName, modelVersion);
    if (!artefact) throw notFound(`no model artefact ${modelName} version ${modelVersion} in organization ${organizationId}`);
    if (!artefact.files.some((f) => f.name === fileName)) {
      throw notFound(`model ${modelName} version ${modelVersion} has no file '${fileName}' (files: ${artefact.files.map((f) => f.name).join(', ')})`);
    }
    return join(this.folder, organizationId, artefact.id, 'files', ...fileName.split('/'));
  }
}
