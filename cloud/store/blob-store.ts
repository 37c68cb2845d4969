// Binary content lives behind BlobStore so that an S3-compatible object store can replace local files:
// put = PutObject (which is atomic and durable once it returns), get = GetObject, delete = DeleteObject.
// Keys are '/'-separated relative paths such as '<org id>/<binary data id>'.
import { readFile, rm } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import { writeFileDurable } from '../../core/durable-file.js';

export interface BlobStore {
  /** Stores content under key; resolves only once the content is durable. Overwrites atomically. */
  put(key: string, content: Uint8Array): Promise<void>;
  /** Returns the content, or undefined when nothing is stored under key. */
  get(key: string): Promise<Buffer | undefined>;
  /** Removes the content; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
}

/** Files under a root folder: temp file, fsync, rename, fsync of the folder. */
export class FileBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    const rel = normalize(key);
    if (rel.startsWith('..') || rel.startsWith(sep) || rel.includes(`..${sep}`) || rel === '.') {
      throw new Error(`blob key '${key}' must be a relative path inside the store`);
    }
    return join(this.root, rel);
  }

  async put(key: string, content: Uint8Array): Promise<void> {
    await writeFileDurable(this.pathOf(key), content, 0o600);
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
