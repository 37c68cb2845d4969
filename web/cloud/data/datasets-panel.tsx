// The organization's datasets: create, rename, delete, and add the selected images to one.
import { useState } from 'preact/hooks';
import type { Dataset } from '../../../gen/platform/app/dataset/v1/dataset.js';
import type { CloudApi } from '../api/client.js';
import { datasetApi } from '../api/dataset.js';

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
