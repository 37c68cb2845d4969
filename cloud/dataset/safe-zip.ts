// Reading a zip that someone else made, safely (yauzl underneath). Before any entry is read, the whole
// central directory is checked: no absolute or `../` paths, no symbolic links, no encrypted entries,
// no duplicate names, at most `maxEntries` entries, and no zip bomb (declared sizes over the limits,
// or an entry that claims to expand more than `maxRatio` times). While an entry is read, yauzl checks
// that it inflates to exactly its declared size, so a lying header cannot get past the limits either.
// Extraction writes only inside its folder, never through an existing file or link, and removes what
// it wrote when anything fails.
import { mkdir, open, realpath, rm } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { ZipRefusedError } from '../errors/catalogue.js';
export { ZipRefusedError };

export interface ZipLimits {
  maxEntries: number;
  /** The sum of the entries' uncompressed sizes. */
  maxTotalBytes: number;
  maxEntryBytes: number;
  /** Uncompressed over compressed size, for entries above 1 MiB. */
  maxRatio: number;
}

export const defaultZipLimits: ZipLimits = { maxEntries: 100_000, maxTotalBytes: 2 ** 30, maxEntryBytes: 256 * 2 ** 20, maxRatio: 200 };

export interface CheckedZip {
  /** File entries (directories left out), in the zip's order. */
  files: Entry[];
  read(entry: Entry): Promise<Buffer>;
  stream(entry: Entry): Promise<Readable>;
  close(): void;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function checkEntry(entry: Entry, seen: Set<string>, limits: ZipLimits): void {
  const name = entry.fileName;
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
  const madeOnUnix = entry.versionMadeBy >> 8 === 3;
  if (madeOnUnix && mode === S_IFLNK) throw new ZipRefusedError(name, 'is a symbolic link; links are not extracted');
  if (name.split('/').includes('..')) throw new ZipRefusedError(name, 'has a ../ path segment, which would write outside the import');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new ZipRefusedError(name, 'is an absolute path');
  if (entry.isEncrypted()) throw new ZipRefusedError(name, 'is encrypted');
  if (seen.has(name)) throw new ZipRefusedError(name, 'appears twice in the zip');
  seen.add(name);
  if (entry.uncompressedSize > limits.maxEntryBytes) {
    throw new ZipRefusedError(name, `expands to ${entry.uncompressedSize} bytes, more than the limit of ${limits.maxEntryBytes} per file (zip bomb?)`);
  }
  if (entry.uncompressedSize > 2 ** 20 && entry.uncompressedSize > limits.maxRatio * Math.max(1, entry.compressedSize)) {
    throw new ZipRefusedError(
      name,
      `expands ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times, more than ${limits.maxRatio} (zip bomb?)`,
    );
  }
}

/** yauzl refuses unsafe names itself, before we see the entry: report its reason with the file. */
function refusedByYauzl(err: Error, zipName: string): ZipRefusedError {
  const m = /^(invalid relative path|absolute path|invalid characters in fileName): (.*)$/.exec(err.message);
  if (m) return new ZipRefusedError(m[2], m[1] === 'invalid relative path' ? 'has a ../ path segment, which would write outside the import' : m[1]);
  return new ZipRefusedError(zipName, `is not a readable zip (${err.message})`);
}

/** Opens the zip at `path` and checks every entry against the rules and limits (see the file comment). */
export async function openCheckedZip(path: string, limits: ZipLimits = defaultZipLimits, zipName = 'the zip'): Promise<CheckedZip> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true });
  } catch (err) {
    throw refusedByYauzl(err as Error, zipName);
  }
  try {
    if (zip.entryCount > limits.maxEntries) throw new ZipRefusedError(zipName, `has ${zip.entryCount} entries, more than the limit of ${limits.maxEntries}`);
    const files: Entry[] = [];
    const seen = new Set<string>();
    let total = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        checkEntry(entry, seen, limits);
        total += entry.uncompressedSize;
        if (total > limits.maxTotalBytes) {
          throw new ZipRefusedError(zipName, `expands to more than ${limits.maxTotalBytes} bytes (at ${entry.fileName}), more than the limit (zip bomb?)`);
        }
        if (!entry.fileName.endsWith('/')) files.push(entry);
      }
    } catch (err) {
      throw err instanceof ZipRefusedError ? err : refusedByYauzl(err as Error, zipName);
    }
    const stream = async (entry: Entry) => zip.openReadStreamPromise(entry);
    return {
      files,
      stream,
      async read(entry) {
        const chunks: Buffer[] = [];
        try {
          for await (const chunk of await stream(entry)) chunks.push(chunk as Buffer);
        } catch (err) {
          throw new ZipRefusedError(entry.fileName, `cannot be read (${(err as Error).message})`);
        }
        return Buffer.concat(chunks);
      },
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/**
 * Extracts the checked zip into `folder` (created if missing): every path is resolved inside the
 * folder's real path, and files are created exclusively, so no entry writes through an existing file
 * or link. On any failure the files written so far are removed again. Returns the paths written.
 */
export async function extractZip(path: string, folder: string, limits: ZipLimits = defaultZipLimits): Promise<string[]> {
  const zip = await openCheckedZip(path, limits);
  await mkdir(folder, { recursive: true });
  const root = await realpath(folder);
  const written: string[] = [];
  try {
    for (const entry of zip.files) {
      const target = resolve(root, entry.fileName);
      if (!target.startsWith(root + sep)) throw new ZipRefusedError(entry.fileName, 'resolves outside the folder');
      await mkdir(dirname(target), { recursive: true });
      if ((await realpath(dirname(target))) !== dirname(target)) throw new ZipRefusedError(entry.fileName, 'goes through a symbolic link');
      const file = await open(target, 'wx', 0o644);
      written.push(target);
      try {
        await pipeline(await zip.stream(entry), file.createWriteStream());
      } catch (err) {
        throw new ZipRefusedError(entry.fileName, `cannot be extracted (${(err as Error).message})`);
      } finally {
        await file.close().catch(() => undefined);
      }
    }
    return written.map((p) => p.slice(root.length + 1));
  } catch (err) {
    for (const p of written) await rm(p, { force: true });
    throw err;
  } finally {
    zip.close();
  }
}
