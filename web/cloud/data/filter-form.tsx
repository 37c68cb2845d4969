// The data view's filters: component, capture time, tags, bounding-box labels and dataset, turned into
// the Filter of BinaryDataByFilter (fields AND together; tags and labels each match any of theirs).
import { useState } from 'preact/hooks';
import { TagsFilterType, type Filter } from '../../../gen/platform/app/data/v1/data.js';
import type { Dataset } from '../../../gen/platform/app/dataset/v1/dataset.js';
import type { Partial2 } from '../api/client.js';

export interface FilterFields {
  componentName: string;
  componentType: string;
  /** datetime-local values (the browser's time zone); empty: open. */
  start: string;
  end: string;
  /** Comma-separated. */
  tags: string;
  labels: string;
  datasetId: string;
}

export const emptyFilter: FilterFields = { componentName: '', componentType: '', start: '', end: '', tags: '', labels: '', datasetId: '' };

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A datetime-local value as a Date, or a clear error naming the field. */
function timeOf(field: string, value: string): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new Error(`${field}: "${value}" is not a date and time`);
  return date;
}

export function filterOf(orgId: string, f: FilterFields): Partial2<Filter> {
  const start = timeOf('from', f.start);
  const end = timeOf('to', f.end);
  if (start && end && start >= end) throw new Error('from must be before to (the interval includes from and excludes to)');
  const tags = list(f.tags);
  return {
    organizationIds: [orgId],
    componentName: f.componentName.trim(),
    componentType: f.componentType.trim(),
    interval: start || end ? { start, end } : undefined,
    tagsFilter: tags.length > 0 ? { type: TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags } : undefined,
    bboxLabels: list(f.labels),
    datasetId: f.datasetId,
  };
}

export function FilterForm(props: { datasets: Dataset[]; knownTags: string[]; knownLabels: string[]; onApply(fields: FilterFields): void }) {
  const [fields, setFields] = useState(emptyFilter);
  const field = (name: keyof FilterFields, label: string, type: 'text' | 'datetime-local' = 'text', listId?: string) => (
    <label>
      {label}
      <input type={type} value={fields[name]} list={listId} onInput={(e) => setFields({ ...fields, [name]: e.currentTarget.value })} />
    </label>
  );
  return (
    <form
      class="filters"
      aria-label="filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(fields);
      }}
    >
      {field('componentName', 'component name')}
      {field('componentType', 'component type')}
      {field('start', 'from', 'datetime-local')}
      {field('end', 'to', 'datetime-local')}
      {field('tags', 'tags (any of)', 'text', 'known-tags')}
      {field('labels', 'box labels (any of)', 'text', 'known-labels')}
      <label>
        dataset
        <select value={fields.datasetId} onChange={(e) => setFields({ ...fields, datasetId: e.currentTarget.value })}>
          <option value="">(any)</option>
          {props.datasets.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <datalist id="known-tags">
        {props.knownTags.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <datalist id="known-labels">
        {props.knownLabels.map((l) => (
          <option key={l} value={l} />
        ))}
      </datalist>
      <button type="submit">Apply filters</button>
      <button
        type="button"
        onClick={() => {
          setFields(emptyFilter);
          props.onApply(emptyFilter);
        }}
      >
        Clear
      </button>
    </form>
  );
}
