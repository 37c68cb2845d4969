// DatasetService.ImportDataset: a header {dataset_id, format, part_id}, then the chunks of a COCO or
// YOLO zip. The zip goes to a private temp file (in importsDir: <data-dir>/imports/ by default), is checked whole (safe-zip.ts)
// and planned whole (import-formats.ts) before anything is stored; then the images go to the blob
// store and every row (binary data in the dataset, bounding boxes) commits in one transaction. Any
// failure removes the blobs written so far: all of it is imported or nothing. Nothing is extracted to
// disk, so no entry name can reach a file outside the import.
import type { ServerReadableStream } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { invalidArgument, resourceExhausted } from '../../core/serving/status-error.js';
import { DatasetFormat, type ImportDatasetRequest, type ImportDatasetResponse } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { PartDirectory, PartInfo } from '../data/parts.js';
import { mimeTypeFor } from '../datasync/mime.js';
import { withSeqs } from '../datasync/ingest.js';
import type { StoreWithBlobs, TabularStore } from '../store/tabular.js';
import { datasetTag } from '../data/dataset-tag.js';
import { imageSize } from './image-size.js';
import { clampBox, ImportError, planCoco, planYolo, type PlannedImage } from './import-formats.js';
import { defaultZipLimits, openCheckedZip, ZipRefusedError, type ZipLimits } from './safe-zip.js';
import type { VersionOperations } from './version-handlers.js';

/** The largest zip an import takes (compressed); its entries are bounded by defaultZipLimits. */
export const maxImportZipBytes = 2 ** 30;

type Header = { datasetId: string; format: DatasetFormat; partId: string };

/**
 * Takes the header, checks it with `check` before taking any data (so a caller without the right to
 * import never gets to fill the disk), then writes the chunks to a temp file.
 */
async function receive<T>(
  call: ServerReadableStream<ImportDatasetRequest, ImportDatasetResponse>,
  folder: string,
  maxBytes: number,
  check: (header: Header) => Promise<T>,
): Promise<{ checked: T; zipPath: string }> {
  let header: Header | undefined;
  let checked: T | undefined;
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const zipPath = join(folder, `${randomUUID()}.zip`);
  const out = createWriteStream(zipPath, { mode: 0o600 });
  let bytes = 0;
  try {
    for await (const msg of call as AsyncIterable<ImportDatasetRequest>) {
      if (msg.header) {
        if (header) throw invalidArgument('header: send it once, as the first message');
        header = msg.header;
        checked = await check(header);
        continue;
      }
      if (!header) throw invalidArgument('header: the first message must be the header {dataset_id, format, part_id}');
      const data = msg.data ?? Buffer.alloc(0);
      bytes += data.length;
      if (bytes > maxBytes) throw resourceExhausted(`data: the zip is larger than the limit of ${maxBytes} bytes`);
      if (!out.write(data)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  } catch (err) {
    out.destroy();
    await rm(zipPath, { force: true });
    throw err;
  }
  if (!header) {
    await rm(zipPath, { force: true });
    throw invalidArgument('header: the first message must be the header {dataset_id, format, part_id}');
  }
  if (bytes === 0) {
    await rm(zipPath, { force: true });
    throw invalidArgument('data: no zip was sent');
  }
  return { checked: checked as T, zipPath };
}

interface ReadyImage {
  id: string;
  blobKey: string;
  plan: PlannedImage;
  ext: string;
  size: number;
}

/** Reads each planned image, checks it, and stores it under a new blob key (recorded in `written`). */
async function storeImages(
  store: StoreWithBlobs,
  zip: Awaited<ReturnType<typeof openCheckedZip>>,
  plans: PlannedImage[],
  org: string,
  written: string[],
): Promise<ReadyImage[]> {
  const ready: ReadyImage[] = [];
  for (const plan of plans) {
    const bytes = await zip.read(plan.entry);
    const size = imageSize(bytes);
    const name = plan.entry.fileName;
    if (!size) throw new ImportError(name, 'is not a PNG, JPEG, GIF, BMP or WebP image (its header cannot be read)');
    if (plan.declared && (plan.declared.width !== size.width || plan.declared.height !== size.height)) {
      throw new ImportError(
        plan.declared.file,
        `says ${name} is ${plan.declared.width}x${plan.declared.height}, but its header says ${size.width}x${size.height}`,
      );
    }
    for (const p of plan.pixelBoxes) {
      plan.boxes.push(
        clampBox({
          label: p.label,
          xMinNormalized: p.x / size.width,
          yMinNormalized: p.y / size.height,
          xMaxNormalized: (p.x + p.w) / size.width,
          yMaxNormalized: (p.y + p.h) / size.height,
        }),
      );
    }
    const id = randomUUID();
    const blobKey = `${org}/${id}`;
    await store.blobs.put(blobKey, bytes);
    written.push(blobKey);
    ready.push({ id, blobKey, plan, ext: name.slice(name.lastIndexOf('.')).toLowerCase(), size: bytes.length });
  }
  return ready;
}

const insertImage = `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
    component_type, component_name, method_name, method_parameters, file_name, file_ext, mime_type, tags, dataset_ids,
    time_requested, time_received, time_synced, file_size_bytes, uri, blob_key, internal)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'rdk:component:camera', 'dataset-import', 'ImportDataset',
    NULL, ?, ?, ?, CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[]), ?, ?, ?, ?, ?, ?, false)`;

/** Box rows per INSERT statement (8 parameters each). */
const boxBatch = 500;

async function commit(store: TabularStore, images: ReadyImage[], part: PartInfo, datasetId: string): Promise<number> {
  const now = new Date();
  const tags = [datasetTag(datasetId)];
  const boxes = images.flatMap((img) =>
    img.plan.boxes.map((b) => [randomUUID(), img.id, b.label, b.xMinNormalized, b.yMinNormalized, b.xMaxNormalized, b.yMaxNormalized]),
  );
  // Every row in one transaction (on PostgreSQL run again whole on a serialization conflict: it does
  // statements only); the blobs were written before it.
  await withSeqs(store, 'binary_data', images.length, async (tx, first) => {
    for (const [i, img] of images.entries()) {
      const name = img.plan.entry.fileName;
      await tx.execute(insertImage, [
        first + BigInt(i),
        img.id,
        part.organizationId,
        part.locationId,
        part.machineId,
        part.robotName,
        part.partId,
        part.partName,
        name.slice(name.lastIndexOf('/') + 1),
        img.ext,
        mimeTypeFor(img.ext, `image/${img.ext.slice(1)}`),
        tags,
        [datasetId],
        now,
        now,
        now,
        BigInt(img.size),
        `platform://binary/${img.id}`,
        img.blobKey,
      ]);
    }
    for (let start = 0; start < boxes.length; start += boxBatch) {
      const batch = boxes.slice(start, start + boxBatch);
      await tx.execute(`INSERT INTO bounding_boxes VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, NULL)').join(', ')}`, batch.flat());
    }
  });
  return boxes.length;
}

export async function importDataset(
  ops: VersionOperations,
  store: StoreWithBlobs,
  authorizer: Authorizer,
  parts: PartDirectory,
  call: ServerReadableStream<ImportDatasetRequest, ImportDatasetResponse>,
  importsDir: string,
  limits: ZipLimits = defaultZipLimits,
): Promise<ImportDatasetResponse> {
  const { checked, zipPath } = await receive(call, importsDir, maxImportZipBytes, async (header) => {
    const format = header.format;
    if (format !== DatasetFormat.DATASET_FORMAT_COCO && format !== DatasetFormat.DATASET_FORMAT_YOLO) {
      throw invalidArgument(`header.format must be DATASET_FORMAT_COCO or DATASET_FORMAT_YOLO, got ${format}`);
    }
    const dataset = await ops.readable(call.metadata, header.datasetId, true);
    const part = await parts.require(header.partId, 'header.part_id');
    if (part.organizationId !== dataset.organizationId)
      throw invalidArgument(`header.part_id ${part.partId} is not a part of organization ${dataset.organizationId}`);
    authorizer.checkUpload(dataset.principal, part);
    return { format, dataset, part };
  });
  const { format, dataset, part } = checked;
  const written: string[] = [];
  try {
    const zip = await openCheckedZip(zipPath, limits);
    try {
      const plans = format === DatasetFormat.DATASET_FORMAT_COCO ? await planCoco(zip) : await planYolo(zip);
      if (plans.length === 0) throw new ImportError('the zip', 'holds no image to import');
      const images = await storeImages(store, zip, plans, dataset.organizationId, written);
      const boxes = await commit(store, images, part, dataset.id);
      written.length = 0;
      return { binaryDataIds: images.map((i) => i.id), imageCount: images.length, boundingBoxCount: boxes };
    } finally {
      zip.close();
    }
  } catch (err) {
    if (err instanceof ImportError || err instanceof ZipRefusedError) throw invalidArgument(`import refused: ${err.file}: ${err.reason}`);
    throw err;
  } finally {
    for (const key of written) await store.blobs.delete(key).catch(() => undefined);
    await rm(zipPath, { force: true });
  }
}
