// Reading a COCO or YOLO dataset out of a checked zip into an import plan: which image entries to
// import and their boxes, normalised to [0, 1]. Everything is checked here, before anything is
// written; a problem is an ImportError naming the file (and line, or JSON path) and the reason.
import type { Entry } from 'yauzl';
import { elementLine, lineAt } from './json-lines.js';
import type { CheckedZip } from './safe-zip.js';
import { ImportError } from '../errors/catalogue.js';
export { ImportError };

export interface PlannedBox {
  label: string;
  xMinNormalized: number;
  yMinNormalized: number;
  xMaxNormalized: number;
  yMaxNormalized: number;
}

export interface PlannedImage {
  entry: Entry;
  /** COCO's declared size, checked against the image header when the image is read. */
  declared?: { width: number; height: number; file: string };
  /** COCO boxes are in pixels until the image's size is known; YOLO boxes are normalised already. */
  pixelBoxes: { label: string; x: number; y: number; w: number; h: number; where: string; file: string }[];
  boxes: PlannedBox[];
}

export const imageExts = ['.jpg', '.jpeg', '.png', '.gif', '.bmp', '.webp'];
const isImage = (name: string) => imageExts.some((e) => name.toLowerCase().endsWith(e));
const dirOf = (name: string) => (name.includes('/') ? name.slice(0, name.lastIndexOf('/') + 1) : '');
const stemOf = (name: string) => name.slice(name.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');
/** Tolerance for boxes on the image's edge (pixels and normalised numbers as trainers write them). */
const eps = 1e-6;

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

async function readJson(zip: CheckedZip, entry: Entry): Promise<{ doc: unknown; text: string }> {
  const text = (await zip.read(entry)).toString('utf8');
  try {
    return { doc: JSON.parse(text), text };
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    throw new ImportError(entry.fileName, `${at ? `line ${lineAt(text, Number(at[1]))}: ` : ''}is not valid JSON (${message})`);
  }
}

interface CocoDoc {
  images: { id: unknown; file_name: unknown; width: unknown; height: unknown }[];
  annotations: { id?: unknown; image_id: unknown; category_id: unknown; bbox: unknown }[];
  categories: { id: unknown; name: unknown }[];
}

const isCoco = (doc: unknown): doc is CocoDoc =>
  typeof doc === 'object' && doc !== null && ['images', 'annotations', 'categories'].every((k) => Array.isArray((doc as Record<string, unknown>)[k]));

/** COCO: every *.json with images, annotations and categories; file_name relative to the JSON's folder (or images/ beside it). */
export async function planCoco(zip: CheckedZip): Promise<PlannedImage[]> {
  const byName = new Map(zip.files.map((e) => [e.fileName, e]));
  const plans = new Map<string, PlannedImage>();
  let docs = 0;
  for (const entry of zip.files.filter((e) => e.fileName.toLowerCase().endsWith('.json'))) {
    const { doc, text } = await readJson(zip, entry);
    if (!isCoco(doc)) continue;
    docs++;
    const file = entry.fileName;
    /** "line N: images[i]" or "annotations[i]", with the line where that element starts. */
    const at = (key: 'images' | 'annotations' | 'categories', i: number) => {
      const line = elementLine(text, key, i);
      return `${line ? `line ${line}: ` : ''}${key}[${i}]`;
    };
    const categories = new Map<unknown, string>();
    doc.categories.forEach((c, i) => {
      if (typeof c?.name !== 'string' || c.name === '') throw new ImportError(file, `${at('categories', i)}.name must be a non-empty string`);
      categories.set(c.id, c.name);
    });
    const images = new Map<unknown, PlannedImage>();
    doc.images.forEach((img, i) => {
      const where = at('images', i);
      if (typeof img?.file_name !== 'string') throw new ImportError(file, `${where}.file_name must be a string`);
      if (!finite(img.width) || !finite(img.height) || img.width <= 0 || img.height <= 0)
        throw new ImportError(file, `${where}.width and .height must be positive numbers`);
      const base = dirOf(file);
      const found = [`${base}${img.file_name}`, `${base}images/${img.file_name}`].map((n) => byName.get(n)).find(Boolean);
      if (!found) throw new ImportError(file, `${where}.file_name '${img.file_name}' is not in the zip (looked beside the JSON and in images/)`);
      if (plans.has(found.fileName)) throw new ImportError(file, `${where}.file_name '${img.file_name}' is listed twice`);
      const plan: PlannedImage = { entry: found, declared: { width: img.width, height: img.height, file }, pixelBoxes: [], boxes: [] };
      plans.set(found.fileName, plan);
      images.set(img.id, plan);
    });
    doc.annotations.forEach((a, i) => {
      const where = `${at('annotations', i)}${a?.id !== undefined ? ` (id ${String(a.id)})` : ''}`;
      const plan = images.get(a?.image_id);
      if (!plan) throw new ImportError(file, `${where}.image_id ${String(a?.image_id)} names no image`);
      const label = categories.get(a.category_id);
      if (label === undefined) throw new ImportError(file, `${where}.category_id ${String(a.category_id)} names no category`);
      const bbox = a.bbox;
      if (!Array.isArray(bbox) || bbox.length !== 4 || !bbox.every(finite))
        throw new ImportError(file, `${where}.bbox must be four numbers [x, y, width, height]`);
      const [x, y, w, h] = bbox as number[];
      const { width, height } = plan.declared!;
      if (w <= 0 || h <= 0) throw new ImportError(file, `${where}.bbox [${bbox.join(', ')}] has no area`);
      if (x < -eps || y < -eps || x + w > width + eps || y + h > height + eps) {
        throw new ImportError(file, `${where}.bbox [${bbox.join(', ')}] is outside its ${width}x${height} image`);
      }
      plan.pixelBoxes.push({ label, x, y, w, h, where, file });
    });
  }
  if (docs === 0) throw new ImportError('the zip', 'has no COCO annotations file (a .json with images, annotations and categories)');
  return [...plans.values()];
}

/** The names of data.yaml: a block map (`0: cat`), a block list (`- cat`) or a flow list (`[cat, dog]`). */
export function yamlNames(text: string, file: string): string[] {
  const lines = text.split(/\r?\n/);
  const at = lines.findIndex((l) => /^names\s*:/.test(l));
  if (at < 0) throw new ImportError(file, 'has no names: list');
  const unquote = (v: string) => {
    const s = v.trim();
    if (s.startsWith('"')) return JSON.parse(s) as string;
    if (s.startsWith("'")) return s.slice(1, -1).replace(/''/g, "'");
    return s;
  };
  const inline = lines[at].replace(/^names\s*:/, '').trim();
  if (inline.startsWith('[')) {
    if (!inline.endsWith(']')) throw new ImportError(file, `line ${at + 1}: names [...] must close on its line`);
    return inline
      .slice(1, -1)
      .split(',')
      .map(unquote)
      .filter((n) => n !== '');
  }
  const names: string[] = [];
  for (let i = at + 1; i < lines.length && /^\s+\S/.test(lines[i]); i++) {
    const item = /^\s+-\s*(.*)$/.exec(lines[i]);
    const pair = /^\s+(\d+)\s*:\s*(.*)$/.exec(lines[i]);
    if (item) names.push(unquote(item[1]));
    else if (pair) {
      if (Number(pair[1]) !== names.length) throw new ImportError(file, `line ${i + 1}: class ${pair[1]} is out of order (expected ${names.length})`);
      names.push(unquote(pair[2]));
    } else throw new ImportError(file, `line ${i + 1}: expected '- name' or 'N: name' under names:`);
  }
  if (names.length === 0) throw new ImportError(file, 'names: lists no class');
  return names;
}

/** YOLO: data.yaml names the classes; each image under an images/ folder may have labels/<same path>.txt. */
export async function planYolo(zip: CheckedZip): Promise<PlannedImage[]> {
  const yaml = zip.files.filter((e) => /(^|\/)data\.ya?ml$/.test(e.fileName)).sort((a, b) => a.fileName.length - b.fileName.length)[0];
  if (!yaml) throw new ImportError('data.yaml', 'is missing: YOLO needs it for the class names');
  const names = yamlNames((await zip.read(yaml)).toString('utf8'), yaml.fileName);
  const labelFiles = new Map(
    zip.files.filter((e) => e.fileName.toLowerCase().endsWith('.txt') && /(^|\/)labels\//.test(e.fileName)).map((e) => [e.fileName, e]),
  );
  const plans: PlannedImage[] = [];
  for (const entry of zip.files.filter((e) => isImage(e.fileName) && /(^|\/)images\//.test(e.fileName))) {
    const labelName = `${dirOf(entry.fileName).replace(/(^|\/)images\//, '$1labels/')}${stemOf(entry.fileName)}.txt`;
    const plan: PlannedImage = { entry, pixelBoxes: [], boxes: [] };
    plans.push(plan);
    const labels = labelFiles.get(labelName);
    if (!labels) continue;
    labelFiles.delete(labelName);
    const lines = (await zip.read(labels)).toString('utf8').split(/\r?\n/);
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `line ${i + 1}`;
      const parts = line.trim().split(/\s+/);
      if (parts.length !== 5)
        throw new ImportError(labels.fileName, `${where}: expected 5 numbers 'class x_center y_center width height', got ${parts.length}`);
      const [cls, xc, yc, w, h] = parts.map(Number);
      if (!Number.isInteger(cls) || cls < 0 || cls >= names.length)
        throw new ImportError(labels.fileName, `${where}: class ${parts[0]} is not in 0..${names.length - 1}`);
      const fields: [string, number][] = [
        ['x_center', xc],
        ['y_center', yc],
        ['width', w],
        ['height', h],
      ];
      for (const [name, v] of fields) {
        if (!Number.isFinite(v) || v < 0 || v > 1)
          throw new ImportError(labels.fileName, `${where}: ${name} ${parts[fields.findIndex((f) => f[0] === name) + 1]} is outside [0, 1]`);
      }
      const box = { label: names[cls], xMinNormalized: xc - w / 2, yMinNormalized: yc - h / 2, xMaxNormalized: xc + w / 2, yMaxNormalized: yc + h / 2 };
      if (w === 0 || h === 0) throw new ImportError(labels.fileName, `${where}: the box has no area`);
      if (box.xMinNormalized < -eps || box.yMinNormalized < -eps || box.xMaxNormalized > 1 + eps || box.yMaxNormalized > 1 + eps) {
        throw new ImportError(labels.fileName, `${where}: the box reaches outside the image`);
      }
      plan.boxes.push(clampBox(box));
    });
  }
  const orphan = [...labelFiles.keys()][0];
  if (orphan) throw new ImportError(orphan, 'labels no image (expected the same path under images/ with an image extension)');
  return plans;
}

/** Rounds to 1e-9 and clamps into [0, 1]: edges within the tolerance land exactly on the edge. */
export function clampBox(b: PlannedBox): PlannedBox {
  const c = (v: number) => Math.min(1, Math.max(0, Math.round(v * 1e9) / 1e9));
  return {
    label: b.label,
    xMinNormalized: c(b.xMinNormalized),
    yMinNormalized: c(b.yMinNormalized),
    xMaxNormalized: c(b.xMaxNormalized),
    yMaxNormalized: c(b.yMaxNormalized),
  };
}
