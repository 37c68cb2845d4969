// The entry point of the thumbnail child process (see thumbnail-process.ts): decodes and scales one image
// per message. Decoding a tenant's image is the cloud's most memory-hungry JavaScript outside queries; here
// a huge or hostile image ends only this process, and the cloud's main thread never blocks on it.
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { lowerOwnPriority, THUMBNAIL_NICENESS } from './thumbnail-priority.js';
import { ThumbnailError } from './thumbnail-error.js';
import type { ContentFile } from './thumbnail-process.js';
import { thumbnailOf } from './thumbnails.js';

lowerOwnPriority(THUMBNAIL_NICENESS);

/** A content file's bytes, its size checked before it is read; 404 when it is missing. */
function readContent(file: ContentFile): Uint8Array {
  let fd: number;
  try {
    fd = openSync(file.path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ThumbnailError(404, `the content of ${file.name} is missing`);
    throw err;
  }
  try {
    const { size } = fstatSync(fd);
    if (size > file.maxBytes) {
      throw new ThumbnailError(
        422,
        `${file.name} is ${size} bytes, larger than the ${file.maxBytes}-byte limit for thumbnails (PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES)`,
      );
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

interface Message {
  id: number;
  /** The content, sent whole, or the file to read it from. */
  bytes?: Uint8Array;
  file?: ContentFile;
  mimeType: string;
  size: number;
}

process.on('message', (message: Message) => {
  let reply: { id: number; thumbnail?: Uint8Array; error?: string; httpStatus?: number };
  try {
    let bytes: Uint8Array;
    try {
      bytes = message.bytes ?? readContent(message.file!);
    } catch (err) {
      // A file that cannot be read is the cloud's fault, not the image's. The reply goes to the tenant:
      // it names the error's code, never the message, which holds the cloud's own file path.
      if (err instanceof ThumbnailError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? 'an unknown error';
      throw new ThumbnailError(500, `the content of ${message.file?.name ?? 'the image'} cannot be read (${code})`);
    }
    reply = { id: message.id, thumbnail: thumbnailOf(bytes, message.mimeType, message.size) };
  } catch (err) {
    reply = { id: message.id, error: (err as Error).message, httpStatus: err instanceof ThumbnailError ? err.httpStatus : 422 };
  }
  process.send!(reply);
});
process.send!({ ready: true });
// The cloud going away (killed, crashed) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
