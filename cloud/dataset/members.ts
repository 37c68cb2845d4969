// A dataset's image members as an export or a training job reads them: live (the binary data in the
// dataset now) or frozen (the rows of a version). Both come out in the same shape and order (by binary
// data id), so that one exporter writes either.
import type { BlobStore } from '../store/blob-store.js';
import { listHas } from '../store/list-sql.js';
import type { StoreWithBlobs, TabularRow } from '../store/tabular.js';
import { datasetTagPrefix } from '../data/dataset-tag.js';
import { imageSize } from './image-size.js';
import { splitMembers, type SplitName, type SplitSpec } from './split.js';

export interface MemberBox {
  id: string;
  label: string;
  xMinNormalized: number;
  yMinNormalized: number;
  xMaxNormalized: number;
  yMaxNormalized: number;
}

export interface Member {
  binaryDataId: string;
  split: SplitName;
  /** Image-level labels: the tags without membership tags, sorted. */
  tags: string[];
  /** Sorted by label, then corners, then id. */
  boxes: MemberBox[];
  /** In pixels from the image header; 0 when the header could not be read. */
  width: number;
  height: number;
  /** With the leading period and lower case, '' when unknown. */
  fileExt: string;
  mimeType: string;
  blobKey: string;
  fileSizeBytes: number;
  partId: string;
  componentName: string;
  timeRequested?: Date;
}

const safeExt = /^\.[a-z0-9]{1,8}$/;

export function normaliseExt(ext: string): string {
  const e = (ext.startsWith('.') || ext === '' ? ext : `.${ext}`).toLowerCase();
  return safeExt.test(e) ? e : '';
}

const boxOrder = (a: MemberBox, b: MemberBox) =>
  a.label < b.label
    ? -1
    : a.label > b.label
      ? 1
      : a.xMinNormalized - b.xMinNormalized ||
        a.yMinNormalized - b.yMinNormalized ||
        a.xMaxNormalized - b.xMaxNormalized ||
        a.yMaxNormalized - b.yMaxNormalized ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export const labelTags = (tags: readonly string[]): string[] => [...new Set(tags.filter((t) => !t.startsWith(datasetTagPrefix)))].sort();

/** Every label the members carry (tags and box labels), sorted. */
export const labelsOf = (members: readonly Member[]): string[] => [...new Set(members.flatMap((m) => [...m.tags, ...m.boxes.map((b) => b.label)]))].sort();

/** The box labels only, sorted: COCO's categories and YOLO's names, in this order in both. */
export const boxLabelsOf = (members: readonly Member[]): string[] => [...new Set(members.flatMap((m) => m.boxes.map((b) => b.label)))].sort();

async function sizeOf(blobs: BlobStore, key: string): Promise<{ width: number; height: number }> {
  const bytes = await blobs.get(key);
  return (bytes && imageSize(bytes)) ?? { width: 0, height: 0 };
}

/** The dataset's image members now, with the split that `spec` gives them; sizes come from the image headers. */
export async function liveMembers(store: StoreWithBlobs, organizationId: string, datasetId: string, spec: SplitSpec): Promise<Member[]> {
  const member = `organization_id = ? AND ${listHas(store.dialect, 'dataset_ids')} AND mime_type LIKE 'image/%' AND NOT internal`;
  const rows = await store.query(
    `SELECT binary_data_id, file_ext, mime_type, tags, blob_key, file_size_bytes, part_id, component_name, time_requested
       FROM binary_data WHERE ${member} ORDER BY binary_data_id`,
    [organizationId, datasetId],
  );
  const boxes = await store.query(
    `SELECT id, binary_data_id, label, x_min_normalized, y_min_normalized, x_max_normalized, y_max_normalized
       FROM bounding_boxes WHERE binary_data_id IN (SELECT binary_data_id FROM binary_data WHERE ${member})`,
    [organizationId, datasetId],
  );
  const boxesOf = new Map<string, MemberBox[]>();
  for (const b of boxes) {
    const list = boxesOf.get(String(b.binary_data_id)) ?? [];
    list.push({
      id: String(b.id),
      label: String(b.label),
      xMinNormalized: Number(b.x_min_normalized),
      yMinNormalized: Number(b.y_min_normalized),
      xMaxNormalized: Number(b.x_max_normalized),
      yMaxNormalized: Number(b.y_max_normalized),
    });
    boxesOf.set(String(b.binary_data_id), list);
  }
  const splits = splitMembers(
    rows.map((r) => String(r.binary_data_id)),
    spec,
  );
  const members: Member[] = [];
  for (const r of rows) {
    const id = String(r.binary_data_id);
    members.push({
      binaryDataId: id,
      split: splits.get(id)!,
      tags: labelTags((r.tags as string[] | null) ?? []),
      boxes: (boxesOf.get(id) ?? []).sort(boxOrder),
      ...(await sizeOf(store.blobs, String(r.blob_key))),
      fileExt: normaliseExt(String(r.file_ext ?? '')),
      mimeType: String(r.mime_type ?? ''),
      blobKey: String(r.blob_key),
      fileSizeBytes: Number(r.file_size_bytes ?? 0),
      partId: String(r.part_id ?? ''),
      componentName: String(r.component_name ?? ''),
      timeRequested: (r.time_requested as Date | null) ?? undefined,
    });
  }
  return members;
}

export function memberOfRow(r: TabularRow): Member {
  return {
    binaryDataId: String(r.binary_data_id),
    split: String(r.split) as SplitName,
    tags: ((r.tags as string[] | null) ?? []).slice(),
    boxes: JSON.parse(String(r.boxes)) as MemberBox[],
    width: Number(r.width),
    height: Number(r.height),
    fileExt: String(r.file_ext),
    mimeType: String(r.mime_type),
    blobKey: String(r.blob_key),
    fileSizeBytes: Number(r.file_size_bytes),
    partId: String(r.part_id ?? ''),
    componentName: String(r.component_name ?? ''),
    timeRequested: (r.time_requested as Date | null) ?? undefined,
  };
}
