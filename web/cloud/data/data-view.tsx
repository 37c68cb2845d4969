// The data view: a grid of the organization's images (thumbnails with their boxes and tags), filters,
// tagging of the selected images, one image in detail (boxes, tags) and the datasets. The grid asks for
// metadata only (include_binary false) and thumbnails; it never downloads full content.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CloudApi } from '../api/client.js';
import type { BinaryData } from '../../../gen/platform/app/data/v1/data.js';
import type { Dataset } from '../../../gen/platform/app/dataset/v1/dataset.js';
import { dataApi } from '../api/data.js';
import { datasetApi } from '../api/dataset.js';
import { saveStream } from '../api/save.js';
import { markInteractive, whenInteractive } from '../ready.js';
import type { CloudView, ViewProps } from '../views.js';
import { DatasetsPanel } from './datasets-panel.js';
import { emptyFilter, filterOf, FilterForm, type FilterFields } from './filter-form.js';
import { ImageDetail } from './image-detail.js';
import { userTags } from './tags.js';
import { Thumbnail } from './thumbnail.js';

export const GRID_PX = 160;
const PAGE = 24;

type UploadProps = { api: CloudApi; orgId: string; onUploaded(): void; showError(err: unknown): void };
type UploadComponent = (props: UploadProps) => preact.JSX.Element;

/**
 * The upload panel (and the AppService and DataSync code it needs) is a chunk of its own, loaded once the
 * grid is usable (every thumbnail of its first page loaded or failed), or at once when something is dragged
 * over the page: the grid's first view does not wait for it.
 */
function LazyUpload(props: UploadProps) {
  const [Panel, setPanel] = useState<UploadComponent | undefined>();
  useEffect(() => {
    let started = false;
    const load = () => {
      if (started) return;
      started = true;
      import('./upload-panel.js').then((m) => setPanel(() => m.UploadPanel), props.showError);
    };
    whenInteractive(load);
    window.addEventListener('dragenter', load, { once: true });
    return () => window.removeEventListener('dragenter', load);
  }, []);
  return Panel ? (
    <Panel {...props} />
  ) : (
    <section class="upload" aria-label="upload images">
      <h2>Upload images</h2>
      <p class="muted">Loading…</p>
    </section>
  );
}

function DataBrowser({ api, orgId, showError }: ViewProps) {
  const [fields, setFields] = useState<FilterFields>(emptyFilter);
  const [items, setItems] = useState<BinaryData[]>([]);
  const [last, setLast] = useState('');
  const [loading, setLoading] = useState(false);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [focus, setFocus] = useState('');
  const [datasets, setDatasets] = useState<Dataset[]>([]);
  const [knownTags, setKnownTags] = useState<string[]>([]);
  const [knownLabels, setKnownLabels] = useState<string[]>([]);
  const [tag, setTag] = useState('');
  // Thumbnails of the first page still loading (-1: the page itself is not there yet).
  const firstPending = useRef(-1);
  const settled = () => {
    if (--firstPending.current === 0) markInteractive();
  };
  // Answers can come back out of order (a slow refresh after a quicker later one): each kind of load
  // applies its answer only if no later load of that kind was started meanwhile, so older data never
  // overwrites newer (a tag just removed coming back, say).
  const pageGen = useRef(0);
  const refreshGen = useRef(0);
  const listsGen = useRef(0);

  const loadPage = async (f: FilterFields, after: string) => {
    setLoading(true);
    const gen = ++pageGen.current;
    try {
      const filter = filterOf(orgId, f);
      const page = await api.call(dataApi.binaryDataByFilter, { dataRequest: { filter, limit: PAGE, last: after }, includeBinary: false });
      if (gen !== pageGen.current) return;
      setItems((old) => (after ? [...old, ...page.data] : page.data));
      if (firstPending.current === -1) {
        firstPending.current = page.data.length;
        if (page.data.length === 0) markInteractive();
      }
      setLast(page.data.length < PAGE ? '' : page.last);
    } catch (err) {
      showError(err);
    } finally {
      setLoading(false);
    }
  };
  const loadLists = async () => {
    const gen = ++listsGen.current;
    try {
      const org = { organizationIds: [orgId] };
      const [ds, tags, labels] = await Promise.all([
        api.call(datasetApi.listByOrganization, { organizationId: orgId }),
        api.call(dataApi.tagsByFilter, { filter: org }),
        api.call(dataApi.boundingBoxLabelsByFilter, { filter: org }),
      ]);
      if (gen !== listsGen.current) return;
      setDatasets(ds.datasets);
      setKnownTags(userTags(tags.tags));
      setKnownLabels(labels.labels);
    } catch (err) {
      showError(err);
    }
  };
  /** Re-reads the shown images (metadata only) after a change, keeping the grid's place. */
  const refresh = () => reload();
  const reload = async (deleted?: string) => {
    const gen = ++refreshGen.current;
    try {
      // A deleted image leaves the grid (BinaryDataByIDs would refuse the whole call for its id).
      const ids = items.map((i) => i.metadata!.binaryDataId).filter((id) => id !== deleted);
      if (deleted) setItems((old) => old.filter((i) => i.metadata!.binaryDataId !== deleted));
      if (ids.length > 0) {
        const fresh = new Map(
          (await api.call(dataApi.binaryDataByIds, { binaryDataIds: ids, includeBinary: false })).data.map((d) => [d.metadata!.binaryDataId, d]),
        );
        if (gen !== refreshGen.current) return;
        setItems((old) => old.map((i) => fresh.get(i.metadata!.binaryDataId) ?? i));
      }
    } catch (err) {
      showError(err);
    }
    await loadLists();
  };

  useEffect(() => {
    void loadPage(fields, '');
    void loadLists();
  }, [orgId]);

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const chosen = [...selected];
  const focused = items.find((i) => i.metadata!.binaryDataId === focus);
  const tagSelected = (add: boolean) => {
    if (!tag.trim()) return showError(new Error('tag: type the tag to add or remove'));
    const m = add ? dataApi.addTagsByIds : dataApi.removeTagsByIds;
    api.call(m, { binaryDataIds: chosen, tags: [tag.trim()] }).then(refresh, showError);
  };

  return (
    <div class="data-view">
      <FilterForm
        datasets={datasets}
        knownTags={knownTags}
        knownLabels={knownLabels}
        onApply={(f) => {
          setFields(f);
          setSelected(new Set());
          void loadPage(f, '');
        }}
      />
      <div class="selection row" aria-label="selection">
        <span data-testid="selected-count">{chosen.length} selected</span>
        <button onClick={() => setSelected(new Set(items.map((i) => i.metadata!.binaryDataId)))}>Select all shown</button>
        <button disabled={chosen.length === 0} onClick={() => setSelected(new Set())}>
          Select none
        </button>
        <label>
          tag
          <input value={tag} list="known-tags" onInput={(e) => setTag(e.currentTarget.value)} />
        </label>
        <button disabled={chosen.length === 0} onClick={() => tagSelected(true)}>
          Tag selected
        </button>
        <button disabled={chosen.length === 0} onClick={() => tagSelected(false)}>
          Untag selected
        </button>
        <button
          title="the data this filter selects, as an MCAP file for Foxglove or Lichtblick"
          onClick={() => saveStream(dataApi.exportMcap, { filter: filterOf(orgId, fields) }, 'data.mcap').catch(showError)}
        >
          Export MCAP
        </button>
      </div>
      <div class="columns">
        <div>
          <ul class="grid" data-testid="image-grid">
            {items.map((item) => {
              const meta = item.metadata!;
              const id = meta.binaryDataId;
              return (
                <li key={id} class={id === focus ? 'focused' : ''} data-testid="image-tile" data-id={id}>
                  <button class="tile" aria-label={`open ${meta.fileName || id}`} onClick={() => setFocus(id)}>
                    <Thumbnail
                      api={api}
                      id={id}
                      size={GRID_PX}
                      boxes={meta.annotations?.bboxes ?? []}
                      alt={`thumbnail ${meta.fileName || id}`}
                      onSettled={settled}
                    />
                  </button>
                  <label class="pick">
                    <input type="checkbox" checked={selected.has(id)} onChange={() => toggle(id)} aria-label={`select ${meta.fileName || id}`} />
                    {meta.captureMetadata?.componentName} · {meta.timeRequested?.toLocaleString()}
                  </label>
                  <div class="tags">
                    {userTags(meta.captureMetadata?.tags ?? []).map((t) => (
                      <span key={t} class="tag">
                        {t}
                      </span>
                    ))}
                    {meta.datasetIds.map((d) => (
                      <span key={d} class="tag dataset" title="dataset">
                        {datasets.find((x) => x.id === d)?.name ?? d}
                      </span>
                    ))}
                  </div>
                </li>
              );
            })}
          </ul>
          {!loading && items.length === 0 && <p>No images match.</p>}
          {last && (
            <button disabled={loading} onClick={() => void loadPage(fields, last)}>
              Load more
            </button>
          )}
        </div>
        <aside>
          {focused && (
            <ImageDetail key={focus} api={api} item={focused} onChanged={() => refresh()} onDeleted={(id) => void reload(id)} showError={showError} />
          )}
          <LazyUpload
            api={api}
            orgId={orgId}
            onUploaded={() => {
              void loadPage(fields, '');
              void loadLists();
            }}
            showError={showError}
          />
          <DatasetsPanel api={api} orgId={orgId} datasets={datasets} selected={chosen} onChanged={refresh} showError={showError} />
        </aside>
      </div>
    </div>
  );
}

export const dataView: CloudView = { id: 'data', title: 'Data', render: (props) => <DataBrowser {...props} /> };
