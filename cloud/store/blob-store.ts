// Binary content lives behind BlobStore so that an S3-compatible object store can replace local files:
// put = PutObject (which is atomic and durable once it returns), get = GetObject, delete = DeleteObject.
// getStream is GetObject too, its body handed on as it arrives: content of any size (a model file of
// hundreds of MiB) is sent or hashed without ever being held whole in memory.
// Keys are '/'-separated relative paths such as '<org id>/<binary data id>'.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, opendir, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, posix, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { syncDir, writeFileDurable } from '../../core/serving/durable-file.js';

export interface BlobStore {
  /** Stores content under key; resolves only once the content is durable. Overwrites atomically. */
  put(key: string, content: Uint8Array): Promise<void>;
  /**
   * Returns the content, or undefined when nothing is stored under key. sizeHint is the size the
   * caller's metadata records; a store may use it to pick a cheaper way to read small content.
   */
  get(key: string, sizeHint?: number): Promise<Buffer | undefined>;
  /**
   * Optional: the content as a stream of chunks, read as the consumer reads, or undefined when nothing
   * is stored under key (as get). An error while streaming (content cut short) fails the stream; a
   * consumer that stops early destroys it, which closes the file or connection. Use openBlobStream,
   * which falls back to get().
   */
  getStream?(key: string): Promise<Readable | undefined>;
  /**
   * Optional: the local file that holds the content under key (it may not exist), for a process on this
   * machine that reads the content itself: the thumbnail child reads images so, and the cloud's main
   * process never holds their bytes (cloud/web/thumbnail-process.ts). Stores without local files lack it.
   */
  localPath?(key: string): string;
  /** Removes the content; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Optional: content that arrives in chunks is written as it comes instead of being held in memory
   * (an S3 store would use a multipart upload). Use openBlobWriter, which falls back to put().
   */
  writer?(): Promise<BlobWriter>;
  /**
   * Optional: every stored object and unfinished temp object with its last-modified time, for the sweep
   * of orphans at start (blob-orphans.ts); with a prefix, only the keys that start with it. A store
   * without it is not swept.
   */
  list?(prefix?: string): AsyncIterable<StoredBlob>;
}

/**
 * The canonical form of a key, the same in every store: '/'-separated, relative, with no '.' or '..'
 * segment and no doubled '/' ('a//b' and 'a/./b' are 'a/b'). A key that would leave the store is refused.
 */
export function blobKeyOf(key: string): string {
  const rel = posix.normalize(key.split(sep).join('/'));
  if (key === '' || rel === '.' || rel === '..' || rel.startsWith('../') || rel.startsWith('/') || rel.endsWith('/')) {
    throw new Error(`blob key '${key}' must be a relative path inside the store`);
  }
  return rel;
}

/** Temp objects of a streamed upload, named in the store's root like the file store's temp files. */
export const uploadTempPattern = /^\.upload-[0-9a-f-]{36}\.tmp$/;

/** An object of a BlobStore: its key (temp objects included) and when it was last written. */
export interface StoredBlob {
  key: string;
  modifiedMs: number;
}

/** Content written chunk by chunk, stored under a key only by commit. */
export interface BlobWriter {
  /** Bytes written so far. */
  readonly size: number;
  write(chunk: Uint8Array): Promise<void>;
  /** Stores what was written under key; durable when it resolves. */
  commit(key: string): Promise<void>;
  /** Drops what was written; safe to call after a failed commit, or twice. */
  abort(): Promise<void>;
}

/** A writer of the store, or one that collects the chunks and puts them at commit. */
export async function openBlobWriter(blobs: BlobStore): Promise<BlobWriter> {
  if (blobs.writer) return blobs.writer();
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    get size() {
      return size;
    },
    async write(chunk) {
      chunks.push(chunk);
      size += chunk.byteLength;
    },
    commit: (key) => blobs.put(key, Buffer.concat(chunks)),
    async abort() {
      chunks.length = 0;
    },
  };
}

/** The store's stream of key's content, or its whole content as a stream of one chunk; undefined when missing. */
export async function openBlobStream(blobs: BlobStore, key: string): Promise<Readable | undefined> {
  if (blobs.getStream) return blobs.getStream(key);
  const content = await blobs.get(key);
  return content && Readable.from([content]);
}

/** A temp file in the store's root, renamed into place by commit. */
class FileBlobWriter implements BlobWriter {
  size = 0;
  private file: FileHandle | undefined;

  constructor(
    private readonly temp: string,
    file: FileHandle,
    private readonly pathOf: (key: string) => string,
  ) {
    this.file = file;
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (!this.file) throw new Error('the blob writer is closed');
    await this.file.write(chunk);
    this.size += chunk.byteLength;
  }

  async commit(key: string): Promise<void> {
    const file = this.file;
    if (!file) throw new Error('the blob writer is closed');
    const path = this.pathOf(key);
    await file.sync();
    this.file = undefined;
    await file.close();
    await mkdir(dirname(path), { recursive: true });
    await rename(this.temp, path);
    await syncDir(dirname(path));
  }

  async abort(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close().catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}

/**
 * Content up to this size is read synchronously. A small file from the page cache takes a few
 * microseconds to open, read and close, whereas an asynchronous read is four trips through libuv's
 * thread pool, which DuckDB's queries share: a page of 50 images of 2 KiB took 3.4 ms to read
 * asynchronously and 0.5 ms synchronously.
 */
export const syncReadBytes = 64 * 1024;

/** The file store's stream reads this much at a time: a gRPC message's worth of a download. */
const streamChunkBytes = 256 * 1024;

/** Files under a root folder: temp file, fsync, rename, fsync of the folder. */
export class FileBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    return join(this.root, blobKeyOf(key));
  }

  localPath(key: string): string {
    return this.pathOf(key);
  }

  async put(key: string, content: Uint8Array): Promise<void> {
    await writeFileDurable(this.pathOf(key), content, 0o600);
  }

  async get(key: string, sizeHint?: number): Promise<Buffer | undefined> {
    const path = this.pathOf(key);
    try {
      return sizeHint !== undefined && sizeHint <= syncReadBytes ? readFileSync(path) : await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Opened here, so that a missing file is undefined rather than an error of the stream's first read. */
  async getStream(key: string): Promise<Readable | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    // The stream closes the file when it ends or is destroyed. A put over the key meanwhile renames a new
    // file into place: this stream goes on reading the content it opened, whole.
    return handle.createReadStream({ highWaterMark: streamChunkBytes });
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /** Temp files sit in the root (the same file system as every key), named .upload-<uuid>.tmp. */
  async writer(): Promise<BlobWriter> {
    await mkdir(this.root, { recursive: true });
    const temp = join(this.root, `.upload-${randomUUID()}.tmp`);
    return new FileBlobWriter(temp, await open(temp, 'w', 0o600), (key) => this.pathOf(key));
  }

  /** Walks the folder tree; temp files (.upload-*.tmp, .<name>.<uuid>.tmp) are listed like content. */
  async *list(prefix = ''): AsyncIterable<StoredBlob> {
    // Only the folder that holds every key with the prefix is walked ('org1/a' and 'org1/' walk org1).
    const folder = prefix.lastIndexOf('/') > 0 ? blobKeyOf(prefix.slice(0, prefix.lastIndexOf('/'))) : '';
    const folders = [join(this.root, folder)];
    while (folders.length > 0) {
      const folder = folders.pop()!;
      let dir;
      try {
        dir = await opendir(folder);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      for await (const entry of dir) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) folders.push(path);
        else if (entry.isFile()) {
          // A file removed since the folder was read is simply not listed.
          const key = relative(this.root, path).split(sep).join('/');
          if (!key.startsWith(prefix)) continue;
          const info = await stat(path).catch(() => undefined);
          if (info) yield { key, modifiedMs: info.mtimeMs };
        }
      }
    }
  }
}
