// The client side of the file transfers: ExportDataset's zip chunks go to a file, then into a folder
// (extracted with the same safety rules the cloud applies to imports); ImportDataset sends a zip, or a
// folder zipped on the fly, after a header naming the dataset, format and part; ExportMcap's chunks go
// to a file.
import type { ClientReadableStream, Metadata } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import { DatasetFormat, type DatasetServiceClient, type ExportDatasetResponse, type ImportDatasetResponse } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { DataServiceClient, ExportMcapResponse, Filter } from '../../gen/platform/app/data/v1/data.js';
import { defaultZipLimits, extractZip } from '../dataset/safe-zip.js';
import { FileNotFoundError, ValueError } from './errors.js';

export { DatasetFormat };
export type DatasetFormatName = 'jsonl' | 'coco' | 'yolo';

export interface ExportDatasetOptions {
  /** A version number; 0 (the default) exports the live dataset. */
  version?: number;
  format: DatasetFormat | DatasetFormatName;
}

export interface ExportedDataset {
  /** The folder written, or the zip file when `dest` ends with .zip. */
  path: string;
  /** The files extracted, relative to the folder (empty for a zip). */
  files: string[];
  zipBytes: number;
}

const byName: Record<DatasetFormatName, DatasetFormat> = {
  jsonl: DatasetFormat.DATASET_FORMAT_JSONL,
  coco: DatasetFormat.DATASET_FORMAT_COCO,
  yolo: DatasetFormat.DATASET_FORMAT_YOLO,
};

export function formatOf(format: DatasetFormat | DatasetFormatName): DatasetFormat {
  if (typeof format === 'number') return format;
  const value = byName[format];
  if (value === undefined) throw new ValueError(`format must be 'jsonl', 'coco' or 'yolo', got '${String(format)}'`);
  return value;
}

/** Our own exports may be large: the client keeps the bomb rules but not the import's 1 GiB total. */
const exportLimits = { ...defaultZipLimits, maxTotalBytes: Number.MAX_SAFE_INTEGER, maxEntryBytes: 16 * 2 ** 30 };

export async function exportDatasetTo(
  rpc: DatasetServiceClient,
  md: Metadata,
  datasetId: string,
  dest: string,
  options: ExportDatasetOptions,
): Promise<ExportedDataset> {
  const request = { datasetId, version: options.version ?? 0, format: formatOf(options.format) };
  const toZip = dest.toLowerCase().endsWith('.zip');
  const work = await mkdtemp(join(toZip ? dirname(dest) : tmpdir(), '.dataset-export-'));
  const zipPath = join(work, `${randomUUID()}.zip`);
  try {
    const stream: ClientReadableStream<ExportDatasetResponse> = rpc.exportDataset(request, md);
    let zipBytes = 0;
    await pipeline(
      stream,
      async function* (source: AsyncIterable<ExportDatasetResponse>) {
        for await (const message of source) {
          zipBytes += message.data.length;
          yield message.data;
        }
      },
      createWriteStream(zipPath, { mode: 0o644 }),
    );
    if (toZip) {
      await rename(zipPath, dest);
      return { path: dest, files: [], zipBytes };
    }
    const files = await extractZip(zipPath, dest, exportLimits);
    return { path: dest, files, zipBytes };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export interface ImportedDataset {
  binaryDataIds: string[];
  imageCount: number;
  boundingBoxCount: number;
}

/** Chunk size of an import's zip. */
const importChunkBytes = 256 * 1024;

/** Zips a folder's regular files (a link in it is refused: the cloud would refuse it anyway). */
async function zipFolder(folder: string, zipPath: string): Promise<void> {
  const zip = new ZipFile();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir)).sort()) {
      const full = join(dir, entry);
      const info = await lstat(full);
      if (info.isSymbolicLink()) throw new ValueError(`${full}: is a symbolic link; an import takes regular files only`);
      if (info.isDirectory()) await walk(full);
      else if (info.isFile()) zip.addFile(full, relative(folder, full).split(sep).join('/'));
    }
  };
  await walk(folder);
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath, { mode: 0o600 }));
}

export async function importDatasetFrom(
  rpc: DatasetServiceClient,
  md: Metadata,
  datasetId: string,
  source: string,
  format: DatasetFormat | DatasetFormatName,
  partId: string,
): Promise<ImportedDataset> {
  const header = { datasetId, format: formatOf(format), partId };
  const info = await lstat(source).catch(() => undefined);
  if (!info) throw new FileNotFoundError(`${source}: no such file or folder`);
  const work = await mkdtemp(join(tmpdir(), '.dataset-import-'));
  try {
    let zipPath = source;
    if (info.isDirectory()) {
      zipPath = join(work, 'import.zip');
      await zipFolder(source, zipPath);
    }
    return await new Promise<ImportedDataset>((resolve, reject) => {
      const file = createReadStream(zipPath, { highWaterMark: importChunkBytes });
      const call = rpc.importDataset(md, (err, res?: ImportDatasetResponse) => {
        // The cloud may answer (a refusal) before it has read everything: stop sending.
        file.destroy();
        if (err) reject(err);
        else resolve(res!);
      });
      call.write({ header });
      file.on('data', (chunk) => {
        if (!call.write({ data: chunk as Buffer })) {
          file.pause();
          call.once('drain', () => file.resume());
        }
      });
      file.on('end', () => call.end());
      file.on('error', (err) => {
        call.cancel();
        reject(err);
      });
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Writes the MCAP of ExportMcap to `dest` (through a temp file beside it, renamed when complete). */
export async function exportMcapTo(rpc: DataServiceClient, md: Metadata, filter: Filter, dest: string): Promise<{ path: string; bytes: number }> {
  const temp = join(dirname(dest), `.${randomUUID()}.mcap.tmp`);
  let bytes = 0;
  try {
    const stream: ClientReadableStream<ExportMcapResponse> = rpc.exportMcap({ filter }, md);
    await pipeline(
      stream,
      async function* (source: AsyncIterable<ExportMcapResponse>) {
        for await (const message of source) {
          bytes += message.data.length;
          yield message.data;
        }
      },
      createWriteStream(temp, { mode: 0o644 }),
    );
    await rename(temp, dest);
    return { path: dest, bytes };
  } finally {
    await rm(temp, { force: true });
  }
}
