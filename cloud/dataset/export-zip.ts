// Writes an export's files as one zip, streamed: images are read from the blob store one at a time,
// as the zip reaches them, and stored as they are (JPEG and PNG do not deflate); text files are
// deflated. Every entry has the same time and mode, so the same files give the same bytes.
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';
import { failedPrecondition } from '../../core/shared/status-error.js';
import type { BlobStore } from '../store/blob-store.js';
import type { ExportFile } from './export-formats.js';

/** The time of every entry: zip times are local DOS times, so a fixed one keeps exports byte-identical. */
const entryTime = new Date(Date.UTC(2020, 0, 1));
const entryOptions = { mtime: entryTime, mode: 0o100644, forceDosTimestamp: true };

/** The zip's bytes in chunks of at most `chunkBytes`. */
export async function* zipExport(files: ExportFile[], blobs: BlobStore, chunkBytes = 256 * 1024): AsyncGenerator<Buffer> {
  const zip = new ZipFile();
  for (const file of files) {
    if ('text' in file) {
      zip.addBuffer(Buffer.from(file.text), file.path, { ...entryOptions, compress: true });
      continue;
    }
    const m = file.member;
    zip.addReadStreamLazy(file.path, { ...entryOptions, compress: false }, (cb) => {
      blobs.get(m.blobKey, m.fileSizeBytes).then(
        (bytes) => {
          if (!bytes) cb(failedPrecondition(`the content of binary data ${m.binaryDataId} is missing from the blob store`), undefined as never);
          else cb(null, Readable.from([bytes]));
        },
        (err) => cb(err, undefined as never),
      );
    });
  }
  // A failed image read is emitted on the ZipFile, not on its output: end the output with it.
  zip.on('error', (err: Error) => (zip.outputStream as Readable).destroy(err));
  zip.end();
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length; at += chunkBytes) yield chunk.subarray(at, at + chunkBytes);
  }
}
