// Image upload in the data view: files dropped on the zone (or chosen) are uploaded one after another
// for the chosen part, with the typed tags, through DataSyncService DataCaptureUpload (DATA_TYPE_FILE,
// the file's own name, extension and type). Each file shows its state (waiting, uploading, its new
// id, or the refusal in the cloud's words); a bar counts the bytes of the files done. A file that fails
// does not stop the others.
import { useState } from 'preact/hooks';
import type { CloudApi } from '../api/client.js';
import { dataSyncApi, FILE_TYPE } from '../api/datasync.js';
import { PartPicker, usePartChoice } from '../part-picker.js';
import { parseTags } from './tags.js';

interface Item {
  file: File;
  state: 'waiting' | 'uploading' | 'uploaded' | 'failed';
  detail: string;
}

/** The file's bytes, typed as the generated message's Buffer (the protobuf writer takes any Uint8Array). */
const bytesOf = async (file: File) => new Uint8Array(await file.arrayBuffer()) as Buffer;

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/** ".png" from "a.b.png"; empty for a name without one (the cloud then stores it as octet-stream). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot).toLowerCase() : '';
}

export function UploadPanel(props: { api: CloudApi; orgId: string; onUploaded(): void; showError(err: unknown): void }) {
  const [machines, partId, setPartId] = usePartChoice(props.api, props.orgId, props.showError);
  const [tags, setTags] = useState('');
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const busy = items.some((i) => i.state === 'waiting' || i.state === 'uploading');

  const upload = async (files: File[]) => {
    if (files.length === 0) return;
    if (!partId) return props.showError(new Error('part: choose the part the images belong to'));
    const tagList = parseTags(tags);
    const batch: Item[] = files.map((file) => ({ file, state: 'waiting', detail: '' }));
    setItems(batch);
    const update = (i: number, state: Item['state'], detail: string) => {
      batch[i] = { ...batch[i], state, detail };
      setItems([...batch]);
    };
    for (let i = 0; i < batch.length; i++) {
      const file = batch[i].file;
      update(i, 'uploading', '');
      try {
        const now = new Date(file.lastModified || Date.now());
        const r = await props.api.call(dataSyncApi.dataCaptureUpload, {
          metadata: {
            partId,
            type: FILE_TYPE,
            fileName: file.name,
            fileExtension: extensionOf(file.name),
            mimeType: file.type,
            tags: tagList,
          },
          sensorContents: [{ metadata: { timeRequested: now, timeReceived: now, mimeType: file.type }, binary: await bytesOf(file) }],
        });
        update(i, 'uploaded', r.binaryDataId);
      } catch (err) {
        update(i, 'failed', err instanceof Error ? err.message : String(err));
      }
    }
    props.onUploaded();
  };

  const done = items.filter((i) => i.state === 'uploaded' || i.state === 'failed');
  const total = items.reduce((n, i) => n + i.file.size, 0);
  const doneBytes = done.reduce((n, i) => n + i.file.size, 0);
  const failed = items.filter((i) => i.state === 'failed').length;
  return (
    <section class="upload" aria-label="upload images">
      <h2>Upload images</h2>
      <div class="row">
        <PartPicker name="uploadPart" machines={machines} partId={partId} onChange={setPartId} />
        <label>
          upload tags
          <input value={tags} placeholder="field, day1" list="known-tags" onInput={(e) => setTags(e.currentTarget.value)} />
        </label>
      </div>
      <label
        class={over ? 'drop over' : 'drop'}
        data-testid="drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (!busy) void upload([...(e.dataTransfer?.files ?? [])]);
        }}
      >
        Drop images here, or choose files
        <input type="file" multiple accept="image/*" disabled={busy} onChange={(e) => void upload([...(e.currentTarget.files ?? [])])} />
      </label>
      {items.length > 0 && (
        <div data-testid="upload-progress">
          <progress max={total || 1} value={doneBytes} />{' '}
          <span data-testid="upload-summary">
            {done.length} of {items.length} files ({kb(doneBytes)} of {kb(total)}){failed > 0 && `, ${failed} failed`}
          </span>
          <ul>
            {items.map((i, n) => (
              <li key={n} class={i.state} data-testid="upload-item">
                {i.file.name} ({kb(i.file.size)}): {i.state}
                {i.detail && (i.state === 'failed' ? <span class="error"> {i.detail}</span> : ` as ${i.detail}`)}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
