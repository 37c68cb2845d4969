// Binary reads, deletes, tags and bounding boxes. Ops by id check each datum against the caller's
// scope and role; ops by filter scope the WHERE clause instead. Runs on either TabularStore (issue 33):
// the statements DuckDB and PostgreSQL spell differently are chosen by the store's dialect, DuckDB's
// being the ones it ran before, unchanged (cloud/store/README.md, dialect table).
import { randomUUID } from 'node:crypto';
import { invalidArgument, notFound } from '../../core/serving/status-error.js';
import type { BinaryData, BinaryID, BoundingBox, Filter } from '../../gen/platform/app/data/v1/data.js';
import type { Authorizer, Need } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { datasetIdsOfTags, missingDatasets } from './dataset-tag.js';
import { internalTag } from '../store/schema.js';
import { Store, type Row } from '../store/store.js';
import type { Dialect, StoreWithBlobs, TabularRow, TabularStore } from '../store/tabular.js';
import { filterWhere, inList, type NeutralWhere } from './filter.js';
import { checkListSize } from './list-limit.js';
import { readPage } from './page-query.js';
import { readPagePg, timeMicrosColumn } from './pg-page.js';
import { binaryMetadataOf, boundingBoxOf, captureColumns, cursorOf, type Page } from './rows.js';

const binaryColumnsOf = (dialect: Dialect) => `seq, ${timeMicrosColumn(dialect)}, binary_data_id, ${captureColumns}, mime_type, file_name, file_ext, uri,
  dataset_ids, time_requested, time_received, file_size_bytes, blob_key`;

/** Text sorted by its bytes, as DuckDB sorts VARCHAR, whatever the PostgreSQL database's collation. */
const byBytes = (dialect: Dialect) => (dialect === 'postgres' ? ' COLLATE "C"' : '');

/** rows.ts reads DuckDB's Row; a TabularRow holds the same JS values on both backends (tabular.ts). */
const asRow = (row: TabularRow) => row as Row;

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** The ids of a request: strings, plus the deprecated BinaryID objects (their file_id). */
export function idsOf(strings: string[], objects: BinaryID[] = [], field = 'binary_data_ids'): string[] {
  const ids = [...strings, ...objects.map((o) => o.fileId)];
  if (ids.length === 0) throw invalidArgument(`${field} must list at least one binary data id`);
  ids.forEach((id, i) => {
    if (!id) throw invalidArgument(`${field}[${i}] must not be empty`);
  });
  return [...new Set(ids)];
}

export function checkTagList(tags: string[]): string[] {
  if (tags.length === 0) throw invalidArgument('tags must list at least one tag');
  checkListSize('tags', tags);
  tags.forEach((tag, i) => {
    if (!tag || tag.trim() === '') throw invalidArgument(`tags[${i}] must be a non-empty string`);
  });
  return [...new Set(tags)];
}

/** PERMISSION_DENIED unless the caller may act with `need` on every row; NOT_FOUND for ids without one unless allowMissing. */
function checkRows(authorizer: Authorizer, principal: KeyPrincipal, rows: TabularRow[], ids: string[], need: Need, allowMissing: boolean): void {
  for (const row of rows) {
    authorizer.check(principal, { organizationId: String(row.organization_id), locationId: String(row.location_id), machineId: String(row.robot_id) }, need);
  }
  if (!allowMissing && rows.length < ids.length) {
    const found = new Set(rows.map((r) => String(r.binary_data_id)));
    throw notFound(`no binary data with id ${ids.filter((id) => !found.has(id)).join(', ')}`);
  }
}

/** Checks the caller against each of the binary data `ids` as rowsForIds does, reading only their places. */
export async function checkBinaryAccess(store: TabularStore, authorizer: Authorizer, principal: KeyPrincipal, ids: string[], need: Need): Promise<void> {
  const byId = inList('binary_data_id', ids);
  const rows = await store.query(`SELECT binary_data_id, organization_id, location_id, robot_id FROM binary_data WHERE ${byId.sql}`, byId.params);
  checkRows(authorizer, principal, rows, ids, need, false);
}

export class BinaryDataStore {
  private readonly dialect: Dialect;
  private readonly binaryColumns: string;

  constructor(
    private readonly store: StoreWithBlobs,
    private readonly authorizer: Authorizer,
  ) {
    this.dialect = store.dialect;
    this.binaryColumns = binaryColumnsOf(store.dialect);
  }

  /** The filter's WHERE clause in this store's dialect. */
  private where(principal: KeyPrincipal, filter: Filter | undefined, includeInternal: boolean, kind: 'binary' | 'tabular' = 'binary'): NeutralWhere {
    return filterWhere(filter, kind, principal, { includeInternal, dialect: this.dialect });
  }

  private async boxesOf(rows: TabularRow[]): Promise<Map<string, BoundingBox[]>> {
    const boxes = new Map<string, BoundingBox[]>();
    if (rows.length === 0) return boxes;
    const byId = inList(
      'binary_data_id',
      rows.map((r) => String(r.binary_data_id)),
    );
    const boxRows = await this.store.query(`SELECT * FROM bounding_boxes WHERE ${byId.sql} ORDER BY id${byBytes(this.dialect)}`, byId.params);
    for (const b of boxRows) {
      const list = boxes.get(String(b.binary_data_id)) ?? [];
      list.push(boundingBoxOf(asRow(b)));
      boxes.set(String(b.binary_data_id), list);
    }
    return boxes;
  }

  private async withBoxesAndContent(rows: TabularRow[], includeBinary: boolean): Promise<BinaryData[]> {
    // The boxes and the contents do not depend on each other: read them at the same time.
    const [boxes, contents] = await Promise.all([
      this.boxesOf(rows),
      Promise.all(
        rows.map(async (row) =>
          includeBinary ? ((await this.store.blobs.get(String(row.blob_key), Number(row.file_size_bytes))) ?? Buffer.alloc(0)) : Buffer.alloc(0),
        ),
      ),
    ]);
    return rows.map((row, i) => ({ binary: contents[i], metadata: binaryMetadataOf(asRow(row), boxes.get(String(row.binary_data_id)) ?? []) }));
  }

  async byFilter(
    principal: KeyPrincipal,
    filter: Filter | undefined,
    page: Page,
    opts: { includeBinary: boolean; countOnly: boolean; includeInternal: boolean },
  ): Promise<{ data: BinaryData[]; count: number; last: string; totalSizeBytes: number }> {
    const where = this.where(principal, filter, opts.includeInternal);
    if (opts.countOnly) {
      const rows = await this.store.query(`SELECT count(*) AS n, coalesce(sum(file_size_bytes), 0) AS bytes FROM binary_data WHERE ${where.sql}`, where.params);
      return { data: [], count: Number(rows[0].n), last: '', totalSizeBytes: Number(rows[0].bytes) };
    }
    // DuckDB: the time-window page reader (page-query.ts); PostgreSQL walks its index (pg-page.ts).
    const rows =
      this.store instanceof Store
        ? await readPage(this.store, 'binary_data', this.binaryColumns, where, page)
        : await readPagePg(this.store, 'binary_data', this.binaryColumns, where, page);
    const data = await this.withBoxesAndContent(rows, opts.includeBinary);
    const totalSizeBytes = rows.reduce((sum, r) => sum + Number(r.file_size_bytes), 0);
    return { data, count: data.length, last: rows.length > 0 ? cursorOf(asRow(rows[rows.length - 1])) : '', totalSizeBytes };
  }

  /**
   * Rows of the given ids after checking each against the caller (PERMISSION_DENIED). Missing ids are
   * NOT_FOUND unless `allowMissing`.
   */
  async rowsForIds(principal: KeyPrincipal, ids: string[], need: Need, allowMissing = false): Promise<TabularRow[]> {
    const byId = inList('binary_data_id', ids);
    const rows = await this.store.query(`SELECT ${this.binaryColumns} FROM binary_data WHERE ${byId.sql}`, byId.params);
    checkRows(this.authorizer, principal, rows, ids, need, allowMissing);
    const order = new Map(ids.map((id, i) => [id, i]));
    return rows.sort((a, b) => order.get(String(a.binary_data_id))! - order.get(String(b.binary_data_id))!);
  }

  async byIds(principal: KeyPrincipal, ids: string[], includeBinary: boolean): Promise<BinaryData[]> {
    return this.withBoxesAndContent(await this.rowsForIds(principal, ids, {}), includeBinary);
  }

  private async deleteRows(where: NeutralWhere): Promise<number> {
    // On PostgreSQL fn may run again after a serialization conflict: it does only statements.
    const { count, blobKeys } = await this.store.transact(async (tx) => {
      const keys = await tx.query(`SELECT binary_data_id, blob_key FROM binary_data WHERE ${where.sql}`, where.params);
      if (keys.length === 0) return { count: 0, blobKeys: [] as string[] };
      const byId = inList(
        'binary_data_id',
        keys.map((k) => String(k.binary_data_id)),
      );
      await tx.execute(`DELETE FROM bounding_boxes WHERE ${byId.sql}`, byId.params);
      const deleted = await tx.execute(`DELETE FROM binary_data WHERE ${byId.sql}`, byId.params);
      // A dataset version that froze a datum keeps its content (cloud/dataset/dataset-versions.ts).
      const frozen = await tx.query(`SELECT DISTINCT blob_key FROM dataset_version_members WHERE ${byId.sql}`, byId.params);
      const kept = new Set(frozen.map((k) => String(k.blob_key)));
      return { count: deleted, blobKeys: keys.map((k) => String(k.blob_key)).filter((k) => !kept.has(k)) };
    });
    // Content goes only after the metadata is gone, so no committed row ever points at missing content.
    await Promise.all(blobKeys.map((key) => this.store.blobs.delete(key)));
    return count;
  }

  async deleteByIds(principal: KeyPrincipal, ids: string[]): Promise<number> {
    await this.rowsForIds(principal, ids, { role: 'owner' }, true);
    return this.deleteRows(inList('binary_data_id', ids));
  }

  async deleteByFilter(principal: KeyPrincipal, filter: Filter | undefined, includeInternal: boolean): Promise<number> {
    if (!filter || filter.organizationIds.length === 0) {
      throw invalidArgument('filter.organization_ids must name at least one organization to delete binary data by filter');
    }
    this.authorizer.checkOrg(principal, principal.organizationId, { role: 'owner' });
    return this.deleteRows(this.where(principal, filter, includeInternal));
  }

  // The internal marker is a tag, so tag changes keep the `internal` column in step with it; and a
  // dataset's tag is its membership, so they keep dataset_ids in step too (see dataset-tag.ts).
  private async addTags(principal: KeyPrincipal, where: NeutralWhere, tags: string[]): Promise<number> {
    const datasets = datasetIdsOfTags(tags);
    // As for an upload naming dataset_ids: the data joins only datasets of its own organization.
    const missing = await missingDatasets(this.store, principal.organizationId, datasets);
    if (missing.length > 0) throw notFound(`tags name dataset ${missing.join(', ')}, which organization ${principal.organizationId} does not have`);
    if (this.dialect === 'postgres') {
      // Each list: its elements and the new ones, each once, sorted by bytes (as DuckDB's list_sort).
      const merged = (column: string) =>
        `ARRAY(SELECT x FROM unnest(array_cat(${column}, CAST(? AS VARCHAR[]))) AS u(x) WHERE x IS NOT NULL GROUP BY x ORDER BY x COLLATE "C")`;
      return this.store.execute(
        `UPDATE binary_data SET tags = ${merged('tags')}, internal = internal OR ?${datasets.length > 0 ? `, dataset_ids = ${merged('dataset_ids')}` : ''}
         WHERE ${where.sql}`,
        [tags, tags.includes(internalTag), ...(datasets.length > 0 ? [datasets] : []), ...where.params],
      );
    }
    return this.store.execute(
      `UPDATE binary_data SET tags = list_sort(list_distinct(list_concat(tags, [${marks(tags.length)}]))),
         internal = internal OR list_contains([${marks(tags.length)}], '${internalTag}')${
           datasets.length > 0 ? `, dataset_ids = list_sort(list_distinct(list_concat(dataset_ids, [${marks(datasets.length)}])))` : ''
         } WHERE ${where.sql}`,
      [...tags, ...tags, ...datasets, ...where.params],
    );
  }

  private async removeTags(where: NeutralWhere, tags: string[]): Promise<number> {
    const datasets = datasetIdsOfTags(tags);
    if (this.dialect === 'postgres') {
      // Each list without the given elements, the rest in their order (as DuckDB's list_filter).
      const kept = (column: string) => `ARRAY(SELECT x FROM unnest(${column}) WITH ORDINALITY AS u(x, i) WHERE NOT (x = ANY(CAST(? AS VARCHAR[]))) ORDER BY i)`;
      return this.store.execute(
        `UPDATE binary_data SET tags = ${kept('tags')}, internal = internal AND NOT ?${datasets.length > 0 ? `, dataset_ids = ${kept('dataset_ids')}` : ''}
         WHERE (${where.sql}) AND tags && CAST(? AS VARCHAR[])`,
        [tags, tags.includes(internalTag), ...(datasets.length > 0 ? [datasets] : []), ...where.params, tags],
      );
    }
    const list = `[${marks(tags.length)}]`;
    return this.store.execute(
      `UPDATE binary_data SET tags = list_filter(tags, t -> NOT list_contains(${list}, t)),
         internal = internal AND NOT list_contains(${list}, '${internalTag}')${
           datasets.length > 0 ? `, dataset_ids = list_filter(dataset_ids, d -> NOT list_contains([${marks(datasets.length)}], d))` : ''
         }
       WHERE (${where.sql}) AND list_has_any(tags, ${list})`,
      [...tags, ...tags, ...datasets, ...where.params, ...tags],
    );
  }

  async addTagsByIds(principal: KeyPrincipal, ids: string[], tags: string[]): Promise<void> {
    await this.rowsForIds(principal, ids, { role: 'owner' });
    await this.addTags(principal, inList('binary_data_id', ids), tags);
  }

  async addTagsByFilter(principal: KeyPrincipal, filter: Filter | undefined, tags: string[]): Promise<void> {
    this.authorizer.checkOrg(principal, principal.organizationId, { role: 'owner' });
    await this.addTags(principal, this.where(principal, filter, true), tags);
  }

  async removeTagsByIds(principal: KeyPrincipal, ids: string[], tags: string[]): Promise<number> {
    await this.rowsForIds(principal, ids, { role: 'owner' });
    return this.removeTags(inList('binary_data_id', ids), tags);
  }

  async removeTagsByFilter(principal: KeyPrincipal, filter: Filter | undefined, tags: string[]): Promise<number> {
    this.authorizer.checkOrg(principal, principal.organizationId, { role: 'owner' });
    return this.removeTags(this.where(principal, filter, true), tags);
  }

  /**
   * The distinct tags of the data that matches: binary and tabular alike, since both carry capture
   * tags. A filter on mime_type, bbox_labels or dataset_id describes binary data only, so then
   * tabular data cannot match.
   */
  async tagsByFilter(principal: KeyPrincipal, filter: Filter | undefined): Promise<string[]> {
    const binary = this.where(principal, filter, false);
    const binaryOnly = filter !== undefined && (filter.mimeType.length > 0 || filter.bboxLabels.length > 0 || filter.datasetId !== '');
    const tabular = binaryOnly ? undefined : this.where(principal, filter, false, 'tabular');
    // DISTINCT lists first: a tabular upload's points all share one tag list.
    const sources = [`SELECT DISTINCT tags FROM binary_data WHERE ${binary.sql}`];
    if (tabular) sources.push(`SELECT DISTINCT tags FROM tabular_data WHERE ${tabular.sql}`);
    const rows = await this.store.query(
      // PostgreSQL: DISTINCT needs the ORDER BY's collation on the selected column (and the subquery a name).
      `SELECT DISTINCT unnest(tags)${byBytes(this.dialect)} AS tag FROM (${sources.join(' UNION ALL ')}) AS lists ORDER BY tag`,
      [...binary.params, ...(tabular?.params ?? [])],
    );
    return rows.map((r) => String(r.tag));
  }

  async labelsByFilter(principal: KeyPrincipal, filter: Filter | undefined): Promise<string[]> {
    const where = this.where(principal, filter, false);
    const rows = await this.store.query(
      // PostgreSQL: DISTINCT needs the ORDER BY's collation on the selected column.
      `SELECT DISTINCT label${byBytes(this.dialect)} AS label FROM bounding_boxes WHERE binary_data_id IN (SELECT binary_data_id FROM binary_data WHERE ${where.sql}) ORDER BY label`,
      where.params,
    );
    return rows.map((r) => String(r.label));
  }

  async addBoundingBox(
    principal: KeyPrincipal,
    id: string,
    box: { label: string; xMinNormalized: number; yMinNormalized: number; xMaxNormalized: number; yMaxNormalized: number },
  ): Promise<string> {
    if (!id) throw invalidArgument('binary_data_id is required');
    if (!box.label || box.label.trim() === '') throw invalidArgument('label must be a non-empty string');
    const coords: [string, number][] = [
      ['x_min_normalized', box.xMinNormalized],
      ['y_min_normalized', box.yMinNormalized],
      ['x_max_normalized', box.xMaxNormalized],
      ['y_max_normalized', box.yMaxNormalized],
    ];
    for (const [field, value] of coords) {
      if (!Number.isFinite(value) || value < 0 || value > 1) throw invalidArgument(`${field} must be within [0, 1], got ${value}`);
    }
    if (box.xMinNormalized > box.xMaxNormalized) throw invalidArgument('x_min_normalized must not exceed x_max_normalized');
    if (box.yMinNormalized > box.yMaxNormalized) throw invalidArgument('y_min_normalized must not exceed y_max_normalized');
    const [row] = await this.rowsForIds(principal, [id], { role: 'owner' });
    if (!String(row.mime_type).startsWith('image/')) {
      throw invalidArgument(`binary data ${id} is not an image (mime type ${String(row.mime_type)}); bounding boxes annotate images`);
    }
    const bboxId = randomUUID();
    // The box goes in only while its datum is there, in one transaction with that check: a delete of the
    // datum (deleteRows, another process's too) runs before it or after it, never in between, so no box
    // is left naming a datum that is gone.
    const added = await this.store.transact((tx) =>
      tx.execute('INSERT INTO bounding_boxes SELECT ?, ?, ?, ?, ?, ?, ?, NULL WHERE EXISTS (SELECT 1 FROM binary_data WHERE binary_data_id = ?)', [
        bboxId,
        id,
        box.label,
        box.xMinNormalized,
        box.yMinNormalized,
        box.xMaxNormalized,
        box.yMaxNormalized,
        id,
      ]),
    );
    if (added === 0) throw notFound(`no binary data ${id}: it was deleted`);
    return bboxId;
  }

  async removeBoundingBox(principal: KeyPrincipal, id: string, bboxId: string): Promise<void> {
    if (!id) throw invalidArgument('binary_data_id is required');
    if (!bboxId) throw invalidArgument('bbox_id is required');
    await this.rowsForIds(principal, [id], { role: 'owner' });
    const removed = await this.store.execute('DELETE FROM bounding_boxes WHERE id = ? AND binary_data_id = ?', [bboxId, id]);
    if (removed === 0) throw notFound(`no bounding box ${bboxId} on binary data ${id}`);
  }
}
