// One image, larger (still a thumbnail, 512 px): its tags (add, remove) and bounding boxes (draw with
// the mouse and label, remove); Download fetches the stored file itself (BinaryDataByIDs with its bytes)
// and Delete removes it after a confirmation. Every change is a DataService call; the caller reloads after.
import { useRef, useState } from 'preact/hooks';
import type { BinaryData } from '../../../gen/platform/app/data/v1/data.js';
import type { CloudApi } from '../api/client.js';
import { dataApi } from '../api/data.js';
import { userTags } from './tags.js';
import { Thumbnail } from './thumbnail.js';

export const DETAIL_PX = 512;

interface Draft {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const clamp = (v: number) => Math.min(1, Math.max(0, v));

export function ImageDetail(props: { api: CloudApi; item: BinaryData; onChanged(): void; onDeleted(id: string): void; showError(err: unknown): void }) {
  const meta = props.item.metadata!;
  const id = meta.binaryDataId;
  const image = useRef<HTMLImageElement | null>(null);
  const [draft, setDraft] = useState<Draft | undefined>();
  const [drawing, setDrawing] = useState(false);
  const [label, setLabel] = useState('');
  const [tag, setTag] = useState('');
  const act = (run: () => Promise<unknown>) => run().then(props.onChanged, props.showError);

  /** The pointer's place on the image, normalized to 0..1. */
  const at = (e: PointerEvent) => {
    const r = image.current!.getBoundingClientRect();
    return { x: clamp((e.clientX - r.left) / r.width), y: clamp((e.clientY - r.top) / r.height) };
  };
  const normalized = draft && {
    xMinNormalized: Math.min(draft.x0, draft.x1),
    yMinNormalized: Math.min(draft.y0, draft.y1),
    xMaxNormalized: Math.max(draft.x0, draft.x1),
    yMaxNormalized: Math.max(draft.y0, draft.y1),
  };
  const saveBox = () => {
    if (!normalized) return;
    if (!label.trim()) return props.showError(new Error('label: give the box a label before saving it'));
    act(() => props.api.call(dataApi.addBoundingBox, { binaryDataId: id, label: label.trim(), ...normalized })).then(() => setDraft(undefined));
  };

  const download = async () => {
    const { data } = await props.api.call(dataApi.binaryDataByIds, { binaryDataIds: [id], includeBinary: true });
    const file = data[0];
    if (!file) throw new Error(`image ${id} is gone`);
    const url = URL.createObjectURL(new Blob([file.binary as BlobPart], { type: file.metadata?.captureMetadata?.mimeType || 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = meta.fileName || `${id}${meta.fileExt}`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  const remove = () => {
    if (!confirm(`Delete ${meta.fileName || id}? Its tags, boxes and dataset memberships go with it.`)) return;
    props.api.call(dataApi.deleteBinaryDataByIds, { binaryDataIds: [id] }).then(() => props.onDeleted(id), props.showError);
  };

  return (
    <section class="detail" aria-label="image detail" data-testid="image-detail">
      <h2>{meta.fileName || id}</h2>
      <div class="row">
        <button type="button" onClick={() => download().catch(props.showError)}>
          Download
        </button>
        <button type="button" onClick={remove}>
          Delete image
        </button>
      </div>
      <div
        class="canvas"
        data-testid="draw-area"
        onPointerDown={(e) => {
          if (!image.current) return;
          e.preventDefault();
          (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
          const p = at(e);
          setDraft({ x0: p.x, y0: p.y, x1: p.x, y1: p.y });
          setDrawing(true);
        }}
        onPointerMove={(e) => {
          if (!drawing || !draft) return;
          const p = at(e);
          setDraft({ ...draft, x1: p.x, y1: p.y });
        }}
        onPointerUp={() => setDrawing(false)}
      >
        <Thumbnail api={props.api} id={id} size={DETAIL_PX} boxes={meta.annotations?.bboxes ?? []} alt={`image ${id}`} onImage={(img) => (image.current = img)}>
          {normalized && (
            <div
              class="bbox draft"
              style={{
                left: `${normalized.xMinNormalized * 100}%`,
                top: `${normalized.yMinNormalized * 100}%`,
                width: `${(normalized.xMaxNormalized - normalized.xMinNormalized) * 100}%`,
                height: `${(normalized.yMaxNormalized - normalized.yMinNormalized) * 100}%`,
              }}
            />
          )}
        </Thumbnail>
      </div>
      <p class="hint">Drag over the image to draw a box, label it, then save.</p>
      <div class="row">
        <label>
          box label
          <input value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </label>
        <button disabled={!normalized || drawing} onClick={saveBox}>
          Save box
        </button>
        <button disabled={!draft} onClick={() => setDraft(undefined)}>
          Discard
        </button>
      </div>
      <h3>Boxes</h3>
      <ul data-testid="detail-boxes">
        {(meta.annotations?.bboxes ?? []).map((b) => (
          <li key={b.id}>
            {b.label} ({b.xMinNormalized.toFixed(2)}, {b.yMinNormalized.toFixed(2)}) – ({b.xMaxNormalized.toFixed(2)}, {b.yMaxNormalized.toFixed(2)}){' '}
            <button
              aria-label={`remove box ${b.label}`}
              onClick={() => act(() => props.api.call(dataApi.removeBoundingBox, { binaryDataId: id, bboxId: b.id }))}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <h3>Tags</h3>
      <ul class="tags" data-testid="detail-tags">
        {userTags(meta.captureMetadata?.tags ?? []).map((t) => (
          <li key={t}>
            {t}{' '}
            <button aria-label={`remove tag ${t}`} onClick={() => act(() => props.api.call(dataApi.removeTagsByIds, { binaryDataIds: [id], tags: [t] }))}>
              ×
            </button>
          </li>
        ))}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (tag.trim()) act(() => props.api.call(dataApi.addTagsByIds, { binaryDataIds: [id], tags: [tag.trim()] })).then(() => setTag(''));
        }}
      >
        <label>
          new tag
          <input value={tag} onInput={(e) => setTag(e.currentTarget.value)} />
        </label>
        <button type="submit">Add tag</button>
      </form>
      <p class="meta">
        {meta.captureMetadata?.componentType} {meta.captureMetadata?.componentName} · {meta.timeRequested?.toLocaleString()} · {meta.fileSizeBytes} bytes ·{' '}
        {meta.captureMetadata?.mimeType}
      </p>
    </section>
  );
}
