// The three export layouts of a dataset's members, as a list of files (path and text or image) in a
// fixed order, so that the same members always give the same bytes:
//   jsonl: images/<id><ext>, dataset.jsonl (one line per image, the reference's fields), labels.txt
//   coco:  <split>/<id><ext>, <split>/_annotations.coco.json (COCO detection JSON per split), labels.txt
//   yolo:  images/<split>/<id><ext>, labels/<split>/<id>.txt (no file for an image without boxes),
//          data.yaml (Ultralytics), labels.txt
// Box labels get one id each, their index in sorted order: COCO category_id, YOLO class id and the line
// of labels.txt agree in all three formats.
import { failedPrecondition } from '../../core/serving/status-error.js';
import { boxLabelsOf, type Member, type MemberBox } from './members.js';
import type { SplitName } from './split.js';

export type ExportFormat = 'jsonl' | 'coco' | 'yolo';

export interface ExportContext {
  datasetId: string;
  organizationId: string;
  /** 0 for the live dataset. */
  version: number;
  /** When the version was made (or the export started, for the live dataset): COCO's info.date_created. */
  created: Date;
}

export type ExportFile = { path: string; text: string } | { path: string; member: Member };

const splits: SplitName[] = ['train', 'valid', 'test'];

/** A file name for a binary data id: ids are UUIDs, but an odd one cannot reach outside its folder. */
const baseName = (m: Member) => m.binaryDataId.replace(/[^A-Za-z0-9_-]/g, '_');
const imageName = (m: Member) => `${baseName(m)}${m.fileExt}`;

/** Pixels are kept to 1e-6 so that 0.6·480 - 0.2·480 reads 192, not 191.99999999999997. */
const px = (v: number) => Math.round(v * 1e6) / 1e6;
/** Normalised YOLO numbers with at most 6 decimals and no trailing zeros. */
const norm = (v: number) => String(Number(v.toFixed(6)));

export function cocoBox(box: MemberBox, width: number, height: number): [number, number, number, number] {
  const x0 = box.xMinNormalized * width;
  const y0 = box.yMinNormalized * height;
  return [px(x0), px(y0), px(box.xMaxNormalized * width - x0), px(box.yMaxNormalized * height - y0)];
}

export function yoloLine(classId: number, box: MemberBox): string {
  const w = box.xMaxNormalized - box.xMinNormalized;
  const h = box.yMaxNormalized - box.yMinNormalized;
  return `${classId} ${norm(box.xMinNormalized + w / 2)} ${norm(box.yMinNormalized + h / 2)} ${norm(w)} ${norm(h)}`;
}

function jsonl(members: Member[], ctx: ExportContext): ExportFile[] {
  const lines = members.map((m) =>
    JSON.stringify({
      image_path: `images/${imageName(m)}`,
      classification_annotations: m.tags.map((t) => ({ annotation_label: t })),
      bounding_box_annotations: m.boxes.map((b) => ({
        annotation_label: b.label,
        x_min_normalized: b.xMinNormalized,
        y_min_normalized: b.yMinNormalized,
        x_max_normalized: b.xMaxNormalized,
        y_max_normalized: b.yMaxNormalized,
      })),
      timestamp: m.timeRequested?.toISOString() ?? null,
      binary_data_id: m.binaryDataId,
      organization_id: ctx.organizationId,
      part_id: m.partId,
      component_name: m.componentName,
      split: m.split,
      width: m.width,
      height: m.height,
    }),
  );
  return [{ path: 'dataset.jsonl', text: lines.length ? `${lines.join('\n')}\n` : '' }, ...members.map((m) => ({ path: `images/${imageName(m)}`, member: m }))];
}

function coco(members: Member[], ctx: ExportContext, labels: string[]): ExportFile[] {
  const ids = new Map(labels.map((l, i) => [l, i]));
  const imageIds = new Map(members.map((m, i) => [m.binaryDataId, i + 1]));
  const files: ExportFile[] = [];
  let annotationId = 0;
  for (const split of splits) {
    const part = members.filter((m) => m.split === split);
    if (part.length === 0) continue;
    const annotations = [];
    for (const m of part) {
      if (m.boxes.length > 0 && (m.width === 0 || m.height === 0)) {
        throw failedPrecondition(`binary data ${m.binaryDataId} has bounding boxes but no readable image header, so COCO cannot place them in pixels`);
      }
      for (const b of m.boxes) {
        const bbox = cocoBox(b, m.width, m.height);
        annotations.push({
          id: ++annotationId,
          image_id: imageIds.get(m.binaryDataId)!,
          category_id: ids.get(b.label)!,
          bbox,
          area: px(bbox[2] * bbox[3]),
          iscrowd: 0,
          segmentation: [],
        });
      }
    }
    const doc = {
      info: {
        description: `dataset ${ctx.datasetId} ${ctx.version ? `version ${ctx.version}` : '(live)'}`,
        version: String(ctx.version),
        date_created: ctx.created.toISOString(),
      },
      licenses: [],
      categories: labels.map((name, id) => ({ id, name, supercategory: 'none' })),
      images: part.map((m) => ({
        id: imageIds.get(m.binaryDataId)!,
        file_name: imageName(m),
        width: m.width,
        height: m.height,
        binary_data_id: m.binaryDataId,
      })),
      annotations,
    };
    files.push({ path: `${split}/_annotations.coco.json`, text: `${JSON.stringify(doc, null, 1)}\n` });
    for (const m of part) files.push({ path: `${split}/${imageName(m)}`, member: m });
  }
  return files;
}

function yolo(members: Member[], ctx: ExportContext, labels: string[]): ExportFile[] {
  const ids = new Map(labels.map((l, i) => [l, i]));
  const yaml = [
    `# dataset ${ctx.datasetId} ${ctx.version ? `version ${ctx.version}` : '(live)'}`,
    'path: .',
    'train: images/train',
    'val: images/valid',
    'test: images/test',
    `nc: ${labels.length}`,
    'names:',
    ...labels.map((l, i) => `  ${i}: ${JSON.stringify(l)}`),
  ];
  const files: ExportFile[] = [{ path: 'data.yaml', text: `${yaml.join('\n')}\n` }];
  for (const m of members) {
    if (m.boxes.length === 0) continue;
    files.push({ path: `labels/${m.split}/${baseName(m)}.txt`, text: `${m.boxes.map((b) => yoloLine(ids.get(b.label)!, b)).join('\n')}\n` });
  }
  for (const m of members) files.push({ path: `images/${m.split}/${imageName(m)}`, member: m });
  return files;
}

/** The files of an export, in the order they go into the zip. */
export function exportFiles(format: ExportFormat, members: Member[], ctx: ExportContext): ExportFile[] {
  const labels = boxLabelsOf(members);
  const labelFile: ExportFile = { path: 'labels.txt', text: labels.map((l) => `${l}\n`).join('') };
  const files = format === 'jsonl' ? jsonl(members, ctx) : format === 'coco' ? coco(members, ctx, labels) : yolo(members, ctx, labels);
  return [labelFile, ...files];
}
