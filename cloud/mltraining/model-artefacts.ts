// Versioned model artefacts written by finished jobs: a row of training_models (training-tables.ts)
// holds the manifest, and the cloud's BlobStore the files, under mltraining/models/<org>/<artefact
// id>/<file> (files on the embedded default, S3 in the scale-out mode). The files are put first and the
// row commits with the job's COMPLETED status (training-run.ts), so a stored model is always whole and
// made once. An artefact outlives the job that made it: deleting a job keeps its model.
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, open, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { failedPrecondition, notFound } from '../../core/serving/status-error.js';
import { openBlobStream, openBlobWriter } from '../store/blob-store.js';
import type { SqlSession, StoreWithBlobs } from '../store/tabular.js';
import { trainingBlobPrefix } from './training-tables.js';
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

/** An artefact whose files are in the blob store and whose row is not yet written (record() writes it). */
export interface UploadedArtefact {
  artefact: ModelArtefact;
  blobKeys: string[];
}

const readChunk = 1024 * 1024;

export class ModelArtefactStore {
  constructor(private readonly store: StoreWithBlobs) {}

  private static keyOf(organizationId: string, id: string, fileName: string): string {
    return `${trainingBlobPrefix}models/${organizationId}/${id}/${fileName}`;
  }

  /**
   * Puts a trainer's output folder into the blob store as a new artefact's files. Only regular files
   * and folders are taken (as copyRegularTree does, and for the same reason); the others are added to
   * `skipped`. The artefact is not listed until record() writes its row.
   */
  async upload(outputFolder: string, meta: NewModelArtefact, skipped: string[] = []): Promise<UploadedArtefact> {
    if (!(await lstat(outputFolder)).isDirectory()) throw failedPrecondition('the model output folder was replaced by something that is not a folder');
    const id = randomUUID();
    const files: ModelArtefactFile[] = [];
    const blobKeys: string[] = [];
    let labelsText = '';
    try {
      const walk = async (folder: string): Promise<void> => {
        for (const entry of (await readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
          const path = join(folder, entry.name);
          const name = relative(outputFolder, path).split(sep).join('/');
          const kind = await lstat(path);
          if (kind.isDirectory()) await walk(path);
          else if (!kind.isFile()) skipped.push(name);
          else {
            // O_NOFOLLOW: a link swapped in after the lstat is refused, not followed with the cloud's rights.
            const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
            try {
              if (!(await handle.stat()).isFile()) {
                skipped.push(name);
                continue;
              }
              const key = ModelArtefactStore.keyOf(meta.organizationId, id, name);
              const writer = await openBlobWriter(this.store.blobs);
              const buffer = Buffer.alloc(readChunk);
              const kept: Buffer[] = [];
              for (;;) {
                const { bytesRead } = await handle.read(buffer, 0, readChunk, null);
                if (bytesRead === 0) break;
                const chunk = Buffer.from(buffer.subarray(0, bytesRead));
                if (name === 'labels.txt') kept.push(chunk);
                await writer.write(chunk);
              }
              blobKeys.push(key);
              await writer.commit(key).catch(async (err: unknown) => {
                await writer.abort();
                throw err;
              });
              files.push({ name, sizeBytes: writer.size });
              if (name === 'labels.txt') labelsText = Buffer.concat(kept).toString('utf8');
            } finally {
              await handle.close();
            }
          }
        }
      };
      await walk(outputFolder);
    } catch (err) {
      await this.discard({ blobKeys });
      throw err;
    }
    const artefact: ModelArtefact = {
      ...meta,
      id,
      files: files.sort((a, b) => a.name.localeCompare(b.name)),
      labels: labelsText
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean),
      createdOn: new Date().toISOString(),
    };
    return { artefact, blobKeys };
  }

  /** Writes the artefact's row, in the transaction that completes its job. */
  async record(tx: SqlSession, artefact: ModelArtefact): Promise<void> {
    await insertModelRow(tx, artefact);
  }

  /** Removes the files of an artefact whose row was never written. */
  async discard(uploaded: Pick<UploadedArtefact, 'blobKeys'>): Promise<void> {
    for (const key of uploaded.blobKeys) await this.store.blobs.delete(key).catch(() => undefined);
  }

  /** The organization's artefacts (of one model, if given), by model name, then oldest first. */
  async list(organizationId: string, modelName?: string): Promise<ModelArtefact[]> {
    const rows = modelName
      ? await this.store.query('SELECT artefact FROM training_models WHERE organization_id = ? AND model_name = ?', [organizationId, modelName])
      : await this.store.query('SELECT artefact FROM training_models WHERE organization_id = ?', [organizationId]);
    return rows
      .map((r) => JSON.parse(String(r.artefact)) as ModelArtefact)
      .sort((a, b) => a.modelName.localeCompare(b.modelName) || a.createdOn.localeCompare(b.createdOn));
  }

  async find(organizationId: string, modelName: string, modelVersion: string): Promise<ModelArtefact | undefined> {
    const rows = await this.store.query('SELECT artefact FROM training_models WHERE organization_id = ? AND model_name = ? AND model_version = ?', [
      organizationId,
      modelName,
      modelVersion,
    ]);
    return rows.length ? (JSON.parse(String(rows[0].artefact)) as ModelArtefact) : undefined;
  }

  /** The content of one file of an artefact, whole; NOT_FOUND when the model, version or file does not exist. */
  async readFile(organizationId: string, modelName: string, modelVersion: string, fileName: string): Promise<Buffer> {
    const artefact = await this.find(organizationId, modelName, modelVersion);
    if (!artefact) throw notFound(`no model artefact ${modelName} version ${modelVersion} in organization ${organizationId}`);
    return this.content(artefact, fileName);
  }

  /** As readFile, as a stream read from the blob store while it is consumed (downloads of any size). */
  async openFile(organizationId: string, modelName: string, modelVersion: string, fileName: string): Promise<Readable> {
    const artefact = await this.find(organizationId, modelName, modelVersion);
    if (!artefact) throw notFound(`no model artefact ${modelName} version ${modelVersion} in organization ${organizationId}`);
    return this.stream(artefact, fileName);
  }

  /** The content of one file of a listed artefact, whole; NOT_FOUND names the files that exist. */
  async content(artefact: ModelArtefact, fileName: string): Promise<Buffer> {
    const file = this.fileOf(artefact, fileName);
    const content = await this.store.blobs.get(ModelArtefactStore.keyOf(artefact.organizationId, artefact.id, fileName), file.sizeBytes);
    if (!content) throw missingBlob(artefact, fileName);
    return content;
  }

  /** As content, as a stream: a model file of hundreds of MiB is never held whole. */
  async stream(artefact: ModelArtefact, fileName: string): Promise<Readable> {
    this.fileOf(artefact, fileName);
    const stream = await openBlobStream(this.store.blobs, ModelArtefactStore.keyOf(artefact.organizationId, artefact.id, fileName));
    if (!stream) throw missingBlob(artefact, fileName);
    return stream;
  }

  private fileOf(artefact: ModelArtefact, fileName: string): ModelArtefactFile {
    const file = artefact.files.find((f) => f.name === fileName);
    if (!file) {
      throw notFound(
        `model ${artefact.modelName} version ${artefact.modelVersion} has no file '${fileName}' (files: ${artefact.files.map((f) => f.name).join(', ')})`,
      );
    }
    return file;
  }
}

/** A file the row lists but the blob store lacks: the cloud's fault (a restore without its blobs), not the caller's. */
function missingBlob(artefact: ModelArtefact, fileName: string): Error {
  return new Error(`the file ${fileName} of model ${artefact.modelName} version ${artefact.modelVersion} is missing from the blob store`);
}

/** A stored model's row (its files are in the blob store under its id). */
export async function insertModelRow(tx: SqlSession, artefact: ModelArtefact): Promise<void> {
  await tx.execute('INSERT INTO training_models VALUES (?, ?, ?, ?, ?, ?, ?)', [
    artefact.id,
    artefact.organizationId,
    artefact.modelName,
    artefact.modelVersion,
    artefact.trainingJobId,
    new Date(artefact.createdOn),
    JSON.stringify(artefact),
  ]);
}
