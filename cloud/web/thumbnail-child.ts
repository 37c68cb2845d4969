// The entry point of the thumbnail child process (see thumbnail-process.ts): decodes and scales one image
// per message. Decoding a tenant's image is the cloud's most memory-hungry JavaScript outside queries; here
// a huge or hostile image ends only this process, and the cloud's main thread never blocks on it.
import { lowerOwnPriority, THUMBNAIL_NICENESS } from './thumbnail-priority.js';
import { ThumbnailError } from './thumbnail-error.js';
import { thumbnailOf } from './thumbnails.js';

lowerOwnPriority(THUMBNAIL_NICENESS);

process.on('message', (message: { id: number; bytes: Uint8Array; mimeType: string; size: number }) => {
  let reply: { id: number; thumbnail?: Uint8Array; error?: string; httpStatus?: number };
  try {
    reply = { id: message.id, thumbnail: thumbnailOf(message.bytes, message.mimeType, message.size) };
  } catch (err) {
    reply = { id: message.id, error: (err as Error).message, httpStatus: err instanceof ThumbnailError ? err.httpStatus : 422 };
  }
  process.send!(reply);
});
process.send!({ ready: true });
// The cloud going away (killed, crashed) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
