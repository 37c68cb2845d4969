// Downloads of agent and runtime binaries: a cache folder holding one file per version, resumable
// downloads (HTTP Range), sha256 verification, and installation by atomically re-pointing a symlink.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, open, readdir, readFile, readlink, rename, rm, stat, symlink } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Logger } from './agent-log.js';
import { ChecksumMismatchError, DownloadError, type Subsystem } from './errors.js';
import { syncDir, writeFileDurable } from '../serving/durable-file.js';
import { getUrl } from './http-get.js';

/** Where a binary comes from: an http(s) URL or a local path (from a file:// URL). */
export interface BinarySource {
  subsystem: Subsystem;
  /** What the config asked for, for logs and names: a version or the URL. */
  version: string;
  location: { kind: 'http'; url: string } | { kind: 'file'; path: string };
  /** Hex sha256 the content must have; empty for a custom URL, which is re-checked for changes instead. */
  sha256?: string;
}

interface SourceMeta {
  file?: string;
  etag?: string;
  lastModified?: string;
  size?: number;
  mtimeMs?: number;
  /** Validator of the partial download, sent as If-Range so a changed file is not glued to an old half. */
  partEtag?: string;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const sourceKey = (s: BinarySource) =>
  createHash('sha256')
    .update(s.location.kind === 'http' ? s.location.url : `file:${s.location.path}`)
    .digest('hex')
    .slice(0, 16);
const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 40);

export class BinaryCache {
  constructor(
    readonly cacheDir: string,
    readonly binDir: string,
    private readonly logger: Logger,
  ) {}

  /** The bin/ symlink through which the subsystem is run. */
  linkPath(subsystem: Subsystem): string {
    const name = subsystem === 'agent' ? 'platform-agent' : 'platform-server';
    return join(this.binDir, process.platform === 'win32' ? `${name}.exe` : name);
  }

  /** The cache file the subsystem's symlink points at, if installed. */
  async installed(subsystem: Subsystem): Promise<string | undefined> {
    try {
      return await readlink(this.linkPath(subsystem));
    } catch {
      return undefined;
    }
  }

  /** Brings the source's binary into the cache (downloading only what is missing) and returns its path. */
  async fetch(source: BinarySource): Promise<string> {
    await mkdir(this.cacheDir, { recursive: true });
    const expected = source.sha256?.toLowerCase();
    if (expected) {
      const file = join(this.cacheDir, `${source.subsystem}-${safe(source.version)}-${expected.slice(0, 16)}`);
      // A file only gets its final name after verification, so an existing one is good.
      if (await exists(file)) {
        this.logger.debug({ subsystem: source.subsystem, version: source.version, file }, 'download: the verified binary is already in the cache');
        return file;
      }
    }
    const key = sourceKey(source);
    const metaPath = join(this.cacheDir, `${key}.json`);
    const meta = await readMeta(metaPath);
    const part = join(this.cacheDir, `${key}.part`);
    const origin = source.location.kind === 'http' ? source.location.url : `file://${source.location.path}`;

    let unchanged: boolean;
    this.logger.debug({ subsystem: source.subsystem, version: source.version, from: origin, sha256: expected ?? null }, 'download: fetching');
    if (source.location.kind === 'file') unchanged = await this.copyLocal(source, source.location.path, part, meta);
    else unchanged = await this.download(source, source.location.url, part, meta, metaPath);
    if (unchanged && meta.file && (await exists(meta.file)) && !expected) {
      this.logger.debug(
        { subsystem: source.subsystem, from: origin, file: meta.file },
        'download: the source is unchanged since the last download; keeping the cached file',
      );
      return meta.file;
    }

    this.logger.debug({ subsystem: source.subsystem, part }, 'download: verifying the sha256');
    const actual = await sha256File(part);
    if (expected && actual !== expected) {
      await rm(part, { force: true });
      await writeFileDurable(metaPath, JSON.stringify({ ...meta, partEtag: undefined }));
      throw new ChecksumMismatchError(source.subsystem, origin, expected, actual);
    }
    const file = join(this.cacheDir, `${source.subsystem}-${safe(source.version)}-${actual.slice(0, 16)}`);
    await chmod(part, 0o755);
    await rename(part, file);
    await syncDir(this.cacheDir);
    await writeFileDurable(metaPath, JSON.stringify({ ...meta, file, partEtag: undefined }));
    this.logger.info({ subsystem: source.subsystem, from: origin, file, sha256: actual }, 'downloaded');
    return file;
  }

  /** Points bin/<subsystem> at `file` (atomic rename of a new symlink). Returns false if it already did. */
  async install(subsystem: Subsystem, file: string): Promise<boolean> {
    const previous = await this.installed(subsystem);
    if (previous === file) {
      this.logger.debug({ subsystem, file }, 'download: already installed');
      return false;
    }
    await chmod(file, 0o755);
    await mkdir(this.binDir, { recursive: true });
    const link = this.linkPath(subsystem);
    const tmp = `${link}.${process.pid}.new`;
    await rm(tmp, { force: true });
    await symlink(file, tmp);
    await rename(tmp, link);
    await syncDir(this.binDir);
    this.logger.info({ subsystem, file }, 'installed');
    await this.prune(subsystem, [file, previous]);
    return true;
  }

  /** Deletes the subsystem's cached binaries except the installed one and the one before (for rollback). */
  private async prune(subsystem: Subsystem, keep: (string | undefined)[]): Promise<void> {
    const names = await readdir(this.cacheDir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(this.cacheDir, name);
      if (!name.startsWith(`${subsystem}-`) || name.endsWith('.part') || keep.includes(path)) continue;
      await rm(path, { force: true }).catch((err: Error) => this.logger.warn({ path, err: err.message }, 'cannot prune the cache'));
    }
  }

  /** Copies a local file into the part file unless its size and mtime are those of the last copy. */
  private async copyLocal(source: BinarySource, path: string, part: string, meta: SourceMeta): Promise<boolean> {
    let st;
    try {
      st = await stat(path);
    } catch (err) {
      throw new DownloadError(source.subsystem, `file://${path}`, (err as Error).message);
    }
    if (!st.isFile()) throw new DownloadError(source.subsystem, `file://${path}`, 'is not a regular file');
    if (meta.size === st.size && meta.mtimeMs === st.mtimeMs && meta.file && !source.sha256) return true;
    this.logger.debug({ subsystem: source.subsystem, path, size: st.size }, 'download: copying the local file');
    await copyFile(path, part);
    meta.size = st.size;
    meta.mtimeMs = st.mtimeMs;
    return false;
  }

  /**
   * Downloads into the part file, resuming from its current length with a Range request. Returns true
   * when the server says the last download is still current (304), so nothing needs to change.
   */
  private async download(source: BinarySource, url: string, part: string, meta: SourceMeta, metaPath: string): Promise<boolean> {
    let have = (await stat(part).catch(() => undefined))?.size ?? 0;
    const headers: Record<string, string> = {};
    if (have > 0) {
      headers.range = `bytes=${have}-`;
      if (meta.partEtag) headers['if-range'] = meta.partEtag;
    } else if (meta.file && !source.sha256 && (await exists(meta.file))) {
      if (meta.etag) headers['if-none-match'] = meta.etag;
      if (meta.lastModified) headers['if-modified-since'] = meta.lastModified;
    }
    let res: IncomingMessage;
    this.logger.debug(
      { subsystem: source.subsystem, url, resume_from: have, headers },
      have > 0 ? 'download: resuming a partial download' : 'download: requesting',
    );
    try {
      res = await getUrl(url, headers);
    } catch (err) {
      throw new DownloadError(source.subsystem, url, (err as Error).message);
    }
    const status = res.statusCode ?? 0;
    this.logger.debug({ subsystem: source.subsystem, url, status, content_length: res.headers['content-length'] ?? null }, 'download: the server answered');
    if (status === 304 || status === 416 || (status !== 200 && status !== 206)) res.resume();
    if (status === 304) return true;
    if (status === 416 && have > 0) return false; // the part is whole already; the hash decides
    if (status !== 200 && status !== 206) {
      throw new DownloadError(source.subsystem, url, `HTTP ${status} ${res.statusMessage ?? ''}`.trim());
    }
    if (status === 200) have = 0;
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    meta.etag = header('etag');
    meta.lastModified = header('last-modified');
    meta.partEtag = meta.etag ?? meta.lastModified;
    await writeFileDurable(metaPath, JSON.stringify(meta));
    const fh = await open(part, have > 0 ? 'a' : 'w', 0o644);
    try {
      for await (const chunk of res) await fh.write(chunk as Buffer);
      await fh.sync();
    } catch (err) {
      throw new DownloadError(source.subsystem, url, `interrupted (${(err as Error).message}); the next check resumes it`);
    } finally {
      await fh.close();
    }
    const length = Number(header('content-length') ?? NaN);
    const size = (await stat(part)).size;
    if (Number.isFinite(length) && size !== have + length) {
      throw new DownloadError(source.subsystem, url, `got ${size - have} of ${length} bytes; the next check resumes it`);
    }
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function readMeta(path: string): Promise<SourceMeta> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as SourceMeta;
  } catch {
    return {};
  }
}
