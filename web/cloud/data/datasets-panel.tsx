// The organization's datasets: create, rename, delete, add the selected images to one, make a frozen
// version of one and export a version (or the live dataset) as a JSONL, COCO or YOLO zip.
import { useEffect, useState } from 'preact/hooks';
import { DatasetFormat, type Dataset, type DatasetVersion } from '../../../gen/platform/app/dataset/v1/dataset.js';
import type { CloudApi } from '../api/client.js';
import { datasetApi } from '../api/dataset.js';
import { saveStream } from '../api/save.js';

const formats: [string, DatasetFormat][] = [
  ['coco', DatasetFormat.DATASET_FORMAT_COCO],
  ['yolo', DatasetFormat.DATASET_FORMAT_YOLO],
  ['jsonl', DatasetFormat.DATASET_FORMAT_JSONL],
];

/** Versions of one dataset, the one to export (0: live), the format, and the two buttons. */
function VersionsAndExport(props: { api: CloudApi; dataset: Dataset; showError(err: unknown): void }) {
  const [versions, setVersions] = useState<DatasetVersion[]>([]);
  const [version, setVersion] = useState(0);
  const [format, setFormat] = useState('coco');
  const [busy, setBusy] = useState(false);
  const id = props.dataset.id;
  const name = props.dataset.name;
  const load = () => props.api.call(datasetApi.listVersions, { datasetId: id }).then((r) => setVersions(r.versions), props.showError);
  useEffect(() => void load(), [id]);
  const makeVersion = () =>
    props.api.call(datasetApi.createVersion, { datasetId: id }).then(async (r) => {
      await load();
      setVersion(r.version?.version ?? 0);
    }, props.showError);
  const exportZip = async () => {
    setBusy(true);
    try {
      const value = formats.find(([n]) => n === format)![1];
      await saveStream(datasetApi.exportDataset, { datasetId: id, version, format: value }, `${name}-${version ? `v${version}` : 'live'}-${format}.zip`);
    } catch (err) {
      props.showError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="row" data-testid={`export-${name}`}>
      <button onClick={() => void makeVersion()}>Make version</button>
      <select aria-label={`version of dataset ${name}`} value={String(version)} onChange={(e) => setVersion(Number(e.currentTarget.value))}>
        <option value="0">live</option>
        {versions.map((v) => (
          <option key={v.version} value={String(v.version)}>
            v{v.version} ({v.imageCount} images)
          </option>
        ))}
      </select>
      <select aria-label={`export format of dataset ${name}`} value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
        {formats.map(([n]) => (
          <option key={n} value={n}>
            {n.toUpperCase()}
          </option>
        ))}
      </select>
      <button disabled={busy} onClick={() => void exportZip()}>
        {busy ? 'Exporting…' : 'Export'}
      </button>
    </div>
  );
}

function DatasetRow(props: { api: CloudApi; dataset: Dataset; selected: string[]; onChanged(): void; showError(err: unknown): void }) {
  const [name, setName] = useState(props.dataset.name);
  const act = (run: () => Promise<unknown>) => run().then(props.onChanged, props.showError);
  const id = props.dataset.id;
  return (
    <li data-testid={`dataset-${props.dataset.name}`}>
      <input aria-label={`name of dataset ${props.dataset.name}`} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <button
        disabled={name.trim() === props.dataset.name || !name.trim()}
        onClick={() => act(() => props.api.call(datasetApi.rename, { id, name: name.trim() }))}
      >
        Rename
      </button>
      <button
        disabled={props.selected.length === 0}
        onClick={() => act(() => props.api.call(datasetApi.addBinaryData, { datasetId: id, binaryDataIds: props.selected }))}
      >
        Add {props.selected.length} selected
      </button>
      <button
        disabled={props.selected.length === 0}
        onClick={() => act(() => props.api.call(datasetApi.removeBinaryData, { datasetId: id, binaryDataIds: props.selected }))}
      >
        Remove selected
      </button>
      <button
        class="danger"
        onClick={() => {
          if (confirm(`Delete dataset ${props.dataset.name}? The images stay.`)) act(() => props.api.call(datasetApi.remove, { id }));
        }}
      >
        Delete
      </button>
      <VersionsAndExport api={props.api} dataset={props.dataset} showError={props.showError} />
    </li>
  );
}

export function DatasetsPanel(props: {
  api: CloudApi;
  orgId: string;
  datasets: Dataset[];
  selected: string[];
  onChanged(): void;
  showError(err: unknown): void;
}) {
  const [name, setName] = useState('');
  return (
    <section class="datasets" aria-label="datasets">
      <h2>Datasets</h2>
      <ul>
        {props.datasets.map((d) => (
          <DatasetRow key={`${d.id}:${d.name}`} {...props} dataset={d} />
        ))}
      </ul>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (!name.trim()) return props.showError(new Error('name: a dataset needs a name'));
          props.api.call(datasetApi.create, { name: name.trim(), organizationId: props.orgId }).then(() => {
            setName('');
            props.onChanged();
          }, props.showError);
        }}
      >
        <label>
          new dataset
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Create dataset</button>
      </form>
    </section>
  );
}
