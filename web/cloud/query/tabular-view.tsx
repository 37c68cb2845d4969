// Tabular data (DataService TabularDataByFilter) as a table and as a time-series chart, page by page:
// the cloud's opaque `last` cursor moves forward; the cursors already seen move back.
import { useEffect, useState } from 'preact/hooks';
import { Order, type TabularDataByFilterResponse } from '../../../gen/platform/app/data/v1/data.js';
import { queryApi } from '../api/query.js';
import type { ViewProps } from '../views.js';
import { knownComponents, typeSuggestions, type KnownComponent } from './known-components.js';
import { Results } from './results.js';
import { pageTable } from './tabular-page.js';

export interface TabularFilter {
  componentName: string;
  componentType: string;
  start: string;
  end: string;
  limit: number;
  newestFirst: boolean;
}

/** A datetime-local field's value as a Date (the browser's time zone), or undefined when empty. */
const dateOf = (local: string) => (local ? new Date(local) : undefined);

export function TabularView(props: ViewProps) {
  const [filter, setFilter] = useState<TabularFilter>({ componentName: '', componentType: '', start: '', end: '', limit: 50, newestFirst: true });
  // cursors[i] is the `last` that fetches page i (page 0: '').
  const [cursors, setCursors] = useState<string[]>(['']);
  const [page, setPage] = useState(0);
  const [reply, setReply] = useState<TabularDataByFilterResponse | undefined>();
  const [error, setError] = useState('');
  const [version, setVersion] = useState(0);
  const [known, setKnown] = useState<KnownComponent[]>([]);
  // Following: the first page, newest first, is read again every 2 s, so new rows appear as they arrive.
  const [follow, setFollow] = useState(false);
  useEffect(() => {
    if (!follow || page !== 0 || !filter.newestFirst) return;
    const timer = setInterval(() => setVersion((v) => v + 1), 2000);
    return () => clearInterval(timer);
  }, [follow, page, filter.newestFirst]);
  useEffect(() => {
    knownComponents(props).then(setKnown, () => undefined);
  }, [props.orgId]);

  useEffect(() => {
    let live = true;
    setError('');
    props.api
      .call(queryApi.tabularDataByFilter, {
        dataRequest: {
          filter: {
            organizationIds: [props.orgId],
            componentName: filter.componentName,
            componentType: filter.componentType,
            interval: { start: dateOf(filter.start), end: dateOf(filter.end) },
          },
          limit: filter.limit,
          last: cursors[page],
          sortOrder: filter.newestFirst ? Order.ORDER_DESCENDING : Order.ORDER_ASCENDING,
        },
      })
      .then(
        (r) => {
          if (!live) return;
          setReply(r);
          if (r.last && r.data.length > 0) setCursors((c) => [...c.slice(0, page + 1), r.last]);
        },
        (err: Error) => live && setError(err.message),
      );
    return () => {
      live = false;
    };
  }, [props.orgId, page, version]);

  function apply(e: Event) {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const limit = Number(form.get('limit'));
    if (!Number.isInteger(limit) || limit < 1 || limit > 10000) {
      setError('limit: must be a whole number from 1 to 10000');
      return;
    }
    setFilter({
      componentName: String(form.get('componentName') ?? '').trim(),
      componentType: String(form.get('componentType') ?? '').trim(),
      start: String(form.get('start') ?? ''),
      end: String(form.get('end') ?? ''),
      limit,
      newestFirst: form.get('order') !== 'oldest',
    });
    setCursors(['']);
    setPage(0);
    setVersion((v) => v + 1);
  }

  const table = reply ? pageTable(reply) : undefined;
  const hasNext = !!reply && reply.data.length === filter.limit && cursors.length > page + 1;
  return (
    <div class="tabular-view">
      <form class="filters" onSubmit={apply}>
        <label>
          Component name <input name="componentName" defaultValue={filter.componentName} list="known-component-names" />
        </label>
        <label>
          Component type{' '}
          <input name="componentType" defaultValue={filter.componentType} placeholder="sensor or core:component:sensor" list="known-component-types" />
        </label>
        <datalist id="known-component-names" data-testid="known-component-names">
          {known.map((c) => (
            <option key={`${c.name} ${c.type}`} value={c.name} label={`${c.type}, ${c.rows} rows`} />
          ))}
        </datalist>
        <datalist id="known-component-types" data-testid="known-component-types">
          {typeSuggestions(known).map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <label>
          From <input type="datetime-local" name="start" defaultValue={filter.start} />
        </label>
        <label>
          Until <input type="datetime-local" name="end" defaultValue={filter.end} />
        </label>
        <label>
          Per page <input type="number" name="limit" min={1} max={10000} defaultValue={String(filter.limit)} />
        </label>
        <label>
          Order
          <select name="order" defaultValue={filter.newestFirst ? 'newest' : 'oldest'}>
            <option value="newest">newest first</option>
            <option value="oldest">oldest first</option>
          </select>
        </label>
        <button type="submit">Apply</button>
        <label>
          <input type="checkbox" aria-label="Follow new rows" checked={follow} onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)} />{' '}
          Follow new rows (first page, newest first)
        </label>
      </form>
      {error && (
        <p class="error" role="alert" data-testid="tabular-error">
          {error}
        </p>
      )}
      <div class="pager">
        <button type="button" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
          Previous page
        </button>
        <span data-testid="tabular-page">page {page + 1}</span>
        <button type="button" disabled={!hasNext} onClick={() => setPage((p) => p + 1)}>
          Next page
        </button>
      </div>
      {table && <Results table={table} testId="tabular-results" />}
    </div>
  );
}
