// Writes an export's files as one zip, streamed: images are read from the blob store one at a time, as
// the zip reaches them (and the consumer has taken what came before), and stored as they are (JPEG and
// PNG do not deflate); text files are deflated. The zip writer (zip-writer.ts) gives every entry one
// time and mode, so the same files give the same bytes.
import { failedPrecondition } from '../../core/serving/status-error.js';
import type { BlobStore } from '../store/blob-store.js';
import type { ExportFile } from './export-formats.js';
import { writeZip, type ZipInput } from './zip-writer.js';

async function* inputs(files: ExportFile[], blobs: BlobStore): AsyncGenerator<ZipInput> {
  for (const file of files) {
    if ('text' in file) {
      yield { path: file.path, data: Buffer.from(file.text), compress: true };
      continue;
    }
    const m = file.member;
    const bytes = await blobs.get(m.blobKey, m.fileSizeBytes);
    if (!bytes) throw failedPrecondition(`the content of binary data ${m.binaryDataId} is missing from the blob store`);
    yield { path: file.path, data: bytes, compress: false };
  }
}

/** Pieces smaller than this (headers, small files) are gathered into one message. */
const small = 64 * 1024;

/** The zip's bytes in chunks of at most `chunkBytes`. */
export async function* zipExport(files: ExportFile[], blobs: BlobStore, chunkBytes = 1024 * 1024): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of writeZip(inputs(files, blobs))) {
    if (piece.length < small) {
      pending.push(piece);
      pendingBytes += piece.length;
      if (pendingBytes < small) continue;
    }
    if (pending.length > 0) {
      yield Buffer.concat(pending);
      const wasPending = pending.includes(piece);
      pending = [];
      pendingBytes = 0;
      if (wasPending) continue;
    }
    for (let at = 0; at < piece.length; at += chunkBytes) yield piece.subarray(at, at + chunkBytes);
  }
  if (pending.length > 0) yield Buffer.concat(pending);
}
