// Writes a dataset to a folder the way trainers read it: images/<binary data id><ext> plus
// dataset.jsonl, one line per image:
//   {"image_path": "images/<id>.png", "binary_data_id": "...",
//    "classification_annotations": [{"annotation_label": "red"}],
//    "bounding_box_annotations": [{"annotation_label": "red", "x_min_normalized": 0.1, ...}]}
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TrainingDataSource } from './data-source.js';

export interface ExportedDataset {
  folder: string;
  datasetFile: string;
  images: number;
  /** How many images and boxes carry each label (after the label filter). */
  labelCounts: Record<string, { images: number; boxes: number }>;
}

const safeExt = /^\.[A-Za-z0-9]{1,8}$/;
/** Dataset membership tags (SPEC: PLATFORM_DATASET_{id}) are bookkeeping, never labels. */
const datasetTagPrefix = 'PLATFORM_DATASET_';

/**
 * Exports the dataset; with `labels`, only those tags and bounding-box labels are written (the job's
 * tags), while every image is kept: an image without them is a negative example.
 */
export async function exportDataset(
  source: TrainingDataSource,
  organizationId: string,
  datasetId: string,
  folder: string,
  labels: string[] | undefined,
  signal?: AbortSignal,
  /** The frozen version to export; absent: the live dataset. */
  version?: number,
): Promise<ExportedDataset> {
  const keep = labels ? new Set(labels) : undefined;
  const wanted = (label: string) => !keep || keep.has(label);
  const images = await source.listImages(organizationId, datasetId, version);
  await mkdir(join(folder, 'images'), { recursive: true });
  const counts: ExportedDataset['labelCounts'] = {};
  const count = (label: string) => (counts[label] ??= { images: 0, boxes: 0 });
  for (const label of labels ?? []) count(label);
  const lines: string[] = [];
  for (const image of images) {
    signal?.throwIfAborted();
    const ext = safeExt.test(image.fileExt) ? image.fileExt.toLowerCase() : '';
    const imagePath = `images/${image.binaryDataId.replace(/[^A-Za-z0-9_-]/g, '_')}${ext}`;
    await writeFile(join(folder, imagePath), await source.readImage(organizationId, image.binaryDataId));
    const tags = [...new Set(image.tags.filter((t) => wanted(t) && !t.startsWith(datasetTagPrefix)))].sort();
    const boxes = image.boundingBoxes.filter((b) => wanted(b.label));
    for (const tag of tags) count(tag).images += 1;
    for (const box of boxes) count(box.label).boxes += 1;
    lines.push(
      JSON.stringify({
        image_path: imagePath,
        binary_data_id: image.binaryDataId,
        classification_annotations: tags.map((t) => ({ annotation_label: t })),
        bounding_box_annotations: boxes.map((b) => ({
          annotation_label: b.label,
          x_min_normalized: b.xMinNormalized,
          y_min_normalized: b.yMinNormalized,
          x_max_normalized: b.xMaxNormalized,
          y_max_normalized: b.yMaxNormalized,
        })),
      }),
    );
  }
  const datasetFile = join(folder, 'dataset.jsonl');
  await writeFile(datasetFile, lines.length ? `${lines.join('\n')}\n` : '');
  return { folder, datasetFile, images: images.length, labelCounts: counts };
}
