// GET /thumbnails/<binary_data_id>?size=N on the cloud's web port: a small JPEG of an uploaded image,
// so the data browser's grid never downloads full content. The caller's `authorization: Bearer <token>`
// is checked exactly as BinaryDataByIDs checks it (same Authorizer, same scope check on the datum's
// organization, location and machine) before anything is read, cached or not.
import { Metadata, status } from '@grpc/grpc-js';
import { decode as decodePng } from 'fast-png';
import { decode as decodeJpeg, encode as encodeJpeg } from 'jpeg-js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toStatusError } from '../../core/serving/status-error.js';
import { badPercentEncoding, decodePath } from '../../core/serving/web/static-files.js';
import type { Authorizer } from '../auth/authorizer.js';
import { BinaryDataStore } from '../data/binary-data.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { ThumbnailError } from './thumbnail-error.js';
import { ThumbnailLookups } from './thumbnail-lookups.js';
import { ThumbnailProcess } from './thumbnail-process.js';
import { envWholeNumber } from '../../core/serving/env.js';

export { ThumbnailError };

export const THUMBNAIL_PATH = '/thumbnails/';
export const DEFAULT_THUMBNAIL_PX = 160;
export const MIN_THUMBNAIL_PX = 16;
export const MAX_THUMBNAIL_PX = 512;
/** Larger images are refused rather than decoded (memory: 4 bytes a pixel). */
const MAX_SOURCE_MEGAPIXELS = 40;

export interface Rgba {
  width: number;
  height: number;
  /** width * height * 4 bytes. */
  data: Uint8Array;
}

export const defaultMaxSourceBytes = 50 * 1024 * 1024;

/** PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES: the largest content a thumbnail is made of. */
export function maxSourceBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber('PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES', defaultMaxSourceBytes, env);
}

const THUMBNAIL_TYPES = new Set(['image/jpeg', 'image/jpg', 'image/png']);

/** 415 for a MIME type that has no thumbnail (checked from the metadata, before the content is read). */
export function checkThumbnailType(mimeType: string): void {
  if (!THUMBNAIL_TYPES.has(mimeType)) throw new ThumbnailError(415, `mime type ${mimeType || '(none)'} has no thumbnail: only image/jpeg and image/png do`);
}

/** PNG (any depth, palette, grey, alpha) or JPEG bytes to RGBA 8-bit. */
export function decodeImage(bytes: Uint8Array, mimeType: string): Rgba {
  if (mimeType === 'image/jpeg' || mimeType === 'image/jpg') {
    const jpeg = decodeJpeg(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_SOURCE_MEGAPIXELS, maxMemoryUsageInMB: 512 });
    return { width: jpeg.width, height: jpeg.height, data: jpeg.data };
  }
  if (mimeType === 'image/png') {
    // The size is in the IHDR chunk, right after the signature: refuse a huge image before decoding it.
    if (bytes.length >= 24) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const [w, h] = [view.getUint32(16), view.getUint32(20)];
      if (w * h > MAX_SOURCE_MEGAPIXELS * 1e6) throw new Error(`the image is ${w}x${h}, over ${MAX_SOURCE_MEGAPIXELS} megapixels`);
    }
    const png = decodePng(bytes);
    if (png.width * png.height > MAX_SOURCE_MEGAPIXELS * 1e6)
      throw new Error(`the image is ${png.width}x${png.height}, over ${MAX_SOURCE_MEGAPIXELS} megapixels`);
    const pixels = png.width * png.height;
    const out = new Uint8Array(pixels * 4);
    const src = png.data;
    const shift = png.depth === 16 ? 8 : 0;
    const c = png.channels;
    if (png.palette) {
      for (let i = 0; i < pixels; i++) {
        const entry = png.palette[src[i]] ?? [0, 0, 0];
        out[i * 4] = entry[0];
        out[i * 4 + 1] = entry[1];
        out[i * 4 + 2] = entry[2];
        out[i * 4 + 3] = entry[3] ?? 255;
      }
    } else if (c === 4 && shift === 0) {
      out.set(src);
    } else {
      // Plain loops, no per-pixel allocation: this runs for every pixel of a camera image.
      for (let i = 0, p = 0, q = 0; i < pixels; i++, p += c, q += 4) {
        if (c <= 2) {
          out[q] = out[q + 1] = out[q + 2] = src[p] >> shift;
          out[q + 3] = c === 2 ? src[p + 1] >> shift : 255;
        } else {
          out[q] = src[p] >> shift;
          out[q + 1] = src[p + 1] >> shift;
          out[q + 2] = src[p + 2] >> shift;
          out[q + 3] = c === 4 ? src[p + 3] >> shift : 255;
        }
      }
    }
    // Sub-8-bit grey comes unpacked to one value per pixel but scaled to its depth: stretch it to 0..255.
    if (!png.palette && png.depth < 8) {
      const scale = 255 / ((1 << png.depth) - 1);
      for (let i = 0; i < out.length; i += 4) out[i] = out[i + 1] = out[i + 2] = Math.round(out[i] * scale);
    }
    return { width: png.width, height: png.height, data: out };
  }
  checkThumbnailType(mimeType);
  throw new ThumbnailError(415, `mime type ${mimeType} has no thumbnail`);
}

/** Fits the image inside size x size (never enlarging), averaging each target pixel's source box; alpha over white. */
export function scaleToFit(image: Rgba, size: number): Rgba {
  const factor = Math.min(1, size / Math.max(image.width, image.height));
  const width = Math.max(1, Math.round(image.width * factor));
  const height = Math.max(1, Math.round(image.height * factor));
  const out = new Uint8Array(width * height * 4);
  for (let ty = 0; ty < height; ty++) {
    const y0 = Math.floor((ty * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((ty + 1) * image.height) / height));
    for (let tx = 0; tx < width; tx++) {
      const x0 = Math.floor((tx * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((tx + 1) * image.width) / width));
      let r = 0,
        g = 0,
        b = 0;
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const p = (y * image.width + x) * 4;
          const a = image.data[p + 3] / 255;
          r += image.data[p] * a + 255 * (1 - a);
          g += image.data[p + 1] * a + 255 * (1 - a);
          b += image.data[p + 2] * a + 255 * (1 - a);
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const q = (ty * width + tx) * 4;
      out[q] = r / n;
      out[q + 1] = g / n;
      out[q + 2] = b / n;
      out[q + 3] = 255;
    }
  }
  return { width, height, data: out };
}

/** The thumbnail bytes (JPEG) of an image's content. */
export function thumbnailOf(bytes: Uint8Array, mimeType: string, size: number): Buffer {
  let image: Rgba;
  try {
    image = decodeImage(bytes, mimeType);
  } catch (err) {
    if (err instanceof ThumbnailError) throw err;
    throw new ThumbnailError(422, `the ${mimeType} content cannot be decoded: ${(err as Error).message}`);
  }
  const small = scaleToFit(image, size);
  return Buffer.from(encodeJpeg({ width: small.width, height: small.height, data: small.data }, 80).data);
}

/** The query's `size`: an integer from MIN to MAX pixels, default DEFAULT_THUMBNAIL_PX. */
export function thumbnailSize(params: URLSearchParams): number {
  const text = params.get('size');
  if (text === null || text === '') return DEFAULT_THUMBNAIL_PX;
  const size = Number(text);
  if (!Number.isInteger(size) || size < MIN_THUMBNAIL_PX || size > MAX_THUMBNAIL_PX) {
    throw new ThumbnailError(400, `size must be an integer from ${MIN_THUMBNAIL_PX} to ${MAX_THUMBNAIL_PX} pixels, got "${text}"`);
  }
  return size;
}

/** A least-recently-used cache bounded by total bytes; thumbnails are small, so many fit. */
export class ThumbnailCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(readonly maxBytes = 32 * 1024 * 1024) {}

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Buffer): void {
    if (value.length > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.length;
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    this.bytes += value.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

const HTTP_OF_GRPC: Partial<Record<number, number>> = {
  [status.INVALID_ARGUMENT]: 400,
  [status.UNAUTHENTICATED]: 401,
  [status.PERMISSION_DENIED]: 403,
  [status.NOT_FOUND]: 404,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.UNAVAILABLE]: 503,
};

export class ThumbnailRoute {
  private readonly binaries: BinaryDataStore;
  readonly cache: ThumbnailCache;

  /** Decoding runs in a child process, never on the cloud's main thread (thumbnail-process.ts). */
  private readonly maker = new ThumbnailProcess();
  /** The datum's row is read in turn between organizations, at most one lookup at a time by default (thumbnail-lookups.ts). */
  private readonly lookups = new ThumbnailLookups();
  /** Content larger than this is refused from its metadata, never read. */
  readonly maxSourceBytes = maxSourceBytesFromEnv();

  constructor(
    private readonly store: StoreWithBlobs,
    private readonly authorizer: Authorizer,
    cache = new ThumbnailCache(),
  ) {
    this.binaries = new BinaryDataStore(store, authorizer);
    this.cache = cache;
  }

  close(): void {
    this.maker.close();
  }

  /** Answers GET /thumbnails/<id>; false for any other path (the web server serves it). */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (!url.pathname.startsWith(THUMBNAIL_PATH)) return false;
    const fail = (code: number, message: string) =>
      res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`${message}\n`);
    if (req.method !== 'GET') {
      fail(405, `${req.method}: thumbnails are read with GET`);
      return true;
    }
    const id = decodePath(url.pathname.slice(THUMBNAIL_PATH.length));
    if (id === undefined) {
      badPercentEncoding(res, url.pathname);
      return true;
    }
    try {
      if (!id || id.includes('/')) throw new ThumbnailError(400, 'the path must be /thumbnails/<binary_data_id>');
      const size = thumbnailSize(url.searchParams);
      const metadata = new Metadata();
      const header = req.headers.authorization;
      if (typeof header === 'string') metadata.set('authorization', header);
      // The same checks as BinaryDataByIDs: a valid token, and the datum within the key's org and scope.
      const principal = await this.authorizer.authenticate(metadata);
      if (principal.kind !== 'api-key') throw new ThumbnailError(403, 'machine parts may only upload data; thumbnails need an API key');
      // The lookup takes a store reader that every organization's reads share: one organization's
      // flood of thumbnail requests must leave the others a reader (thumbnail-lookups.ts).
      const [row] = await this.lookups.run(principal.organizationId, () => this.binaries.rowsForIds(principal, [id], {}));
      // The blob key names the content: a datum whose content changed gets a new cache entry.
      const key = `${String(row.blob_key)}:${size}`;
      let thumbnail = this.cache.get(key);
      if (!thumbnail) {
        // Decided from the metadata, before any content is read: six requests for a 400 MiB ".png"
        // once held 3.46 GB. The content is read only when the job's turn comes (thumbnail-process.ts).
        const mimeType = String(row.mime_type);
        checkThumbnailType(mimeType);
        const bytes = Number(row.file_size_bytes);
        if (bytes > this.maxSourceBytes) {
          throw new ThumbnailError(
            422,
            `binary data ${id} is ${bytes} bytes, larger than the ${this.maxSourceBytes}-byte limit for thumbnails (PLATFORM_THUMBNAIL_MAX_SOURCE_BYTES)`,
          );
        }
        // A local file is read by the thumbnail child itself, so the main process never holds the
        // image (its heap's growth cost every tenant full garbage collections; thumbnail-process.ts).
        const path = this.store.blobs.localPath?.(String(row.blob_key));
        const load = async () => {
          const content = await this.store.blobs.get(String(row.blob_key), bytes);
          if (!content) throw new ThumbnailError(404, `the content of binary data ${id} is missing`);
          return content;
        };
        const content = path === undefined ? load : { path, maxBytes: this.maxSourceBytes, name: `binary data ${id}` };
        thumbnail = await this.maker.make(content, mimeType, size, principal.organizationId);
        this.cache.set(key, thumbnail);
      }
      // Private: the answer depends on the caller's key.
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': thumbnail.length, 'cache-control': 'private, max-age=300' });
      res.end(thumbnail);
    } catch (err) {
      if (err instanceof ThumbnailError) fail(err.httpStatus, err.message);
      else {
        const s = toStatusError(err);
        const code = HTTP_OF_GRPC[s.code];
        if (code === undefined) throw err;
        fail(code, s.message);
      }
    }
    return true;
  }
}
