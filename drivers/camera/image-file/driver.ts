// image_file in its worker. The files are read on every GetImage (a file replaced on disk is served
// fresh); in the file's own format when asked for it or for the default, re-encoded as PNG when asked
// for image/png.
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { encode } from 'fast-png';
import type { Camera, CameraImage } from '../../../plugins/apis/camera.js';
import { defineDriver } from '../../../plugins/driver.js';
import { failedPrecondition, invalidArgument, unimplemented } from '../../../plugins/errors.js';
import { decodeRgb, JPEG_MIME, PNG_MIME } from '../image-decode/rgb-image.js';
import type { ImageFileAttributes } from './model.js';

const mimeOf = (path: string) => (extname(path).toLowerCase() === '.png' ? PNG_MIME : JPEG_MIME);
const isImage = (name: string) => ['.png', '.jpg', '.jpeg'].includes(extname(name).toLowerCase());

async function filesOf(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    throw failedPrecondition(
      `color_image_file_path ${JSON.stringify(path)}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (!info.isDirectory()) {
    if (!isImage(path)) throw failedPrecondition(`color_image_file_path ${JSON.stringify(path)}: must end in .png, .jpg or .jpeg`);
    return [path];
  }
  const names = (await readdir(path)).filter(isImage).sort();
  if (names.length === 0) throw failedPrecondition(`color_image_file_path ${JSON.stringify(path)}: the folder has no .png, .jpg or .jpeg file`);
  return names.map((n) => join(path, n));
}

export default defineDriver<ImageFileAttributes, Camera>(async ({ attributes }) => {
  const files = await filesOf(attributes.color_image_file_path);
  // Checked now so that an unreadable first image is this resource's build error.
  decodeRgb(await readFile(files[0]), mimeOf(files[0]), `color_image_file_path ${JSON.stringify(files[0])}`);
  let next = 0;

  return {
    async getImage(mimeType): Promise<CameraImage> {
      const path = files[next];
      next = (next + 1) % files.length;
      const own = mimeOf(path);
      if (mimeType && mimeType !== PNG_MIME && mimeType !== JPEG_MIME) {
        throw invalidArgument(`mime_type ${JSON.stringify(mimeType)}: must be ${PNG_MIME}, ${JPEG_MIME} or empty`);
      }
      const bytes = new Uint8Array(await readFile(path));
      const image = decodeRgb(bytes, own, `color_image_file_path ${JSON.stringify(path)}`);
      if (!mimeType || mimeType === own) return { mimeType: own, data: bytes, width: image.width, height: image.height };
      if (mimeType === PNG_MIME) {
        const png = encode({ width: image.width, height: image.height, data: image.rgb, channels: 3, depth: 8 });
        return { mimeType: PNG_MIME, data: png, width: image.width, height: image.height };
      }
      throw invalidArgument(`mime_type ${JSON.stringify(mimeType)}: ${path} is a PNG; ask for ${PNG_MIME} or empty`);
    },
    getPointCloud() {
      throw unimplemented('the image_file camera has no point clouds');
    },
    getPointCloudPcd() {
      throw unimplemented('the image_file camera has no point clouds');
    },
    getProperties() {
      return { supportsPcd: false, mimeTypes: [mimeOf(files[0]), ...(mimeOf(files[0]) === PNG_MIME ? [] : [PNG_MIME])] };
    },
  };
});
