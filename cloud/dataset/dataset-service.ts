// platform.app.dataset.v1.DatasetService. A dataset belongs to one organization. Owners (at any scope
// of the org) create datasets and add or remove data they can reach; only organization-level owners
// rename or delete a dataset (FACTS.md "Permissions"). Membership is kept on each binary datum as
// dataset_ids plus the tag PLATFORM_DATASET_{id}, in one transaction.
import type { Metadata, Server } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alreadyExists, invalidArgument, notFound, permissionDenied } from '../../core/serving/status-error.js';
import { DatasetServiceService, type Dataset, type DatasetServiceServer } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type KeyPrincipal } from '../auth/principal.js';
import { checkBinaryAccess, idsOf } from '../data/binary-data.js';
import { inList } from '../data/filter.js';
import { clientStream, serverStream, unary } from '../kit/handlers.js';
import { listHas, listWith, listWithout } from '../store/list-sql.js';
import { Store } from '../store/store.js';
import type { StoreWithBlobs, TabularRow, TabularStore } from '../store/tabular.js';
import { datasetTag } from '../data/dataset-tag.js';
import { DatasetVersions } from './dataset-versions.js';
import { exportDataset } from './export-handler.js';
import { importDataset } from './import-handler.js';
import { PartDirectory } from '../data/parts.js';
import { VersionOperations, versionHandlers } from './version-handlers.js';

const datasetOf = (row: TabularRow): Dataset => ({
  id: String(row.id),
  name: String(row.name),
  organizationId: String(row.organization_id),
  timeCreated: row.time_created as Date,
});

export class Datasets {
  constructor(
    private readonly store: TabularStore,
    private readonly authorizer: Authorizer,
  ) {}

  async caller(md: Metadata): Promise<KeyPrincipal> {
    const p = await this.authorizer.authenticate(md);
    return this.authorizer.checkOrg(p, p.organizationId);
  }

  async load(id: string, field = 'id'): Promise<Dataset> {
    if (!id) throw invalidArgument(`${field} is required`);
    const rows = await this.store.query('SELECT * FROM datasets WHERE id = ?', [id]);
    if (rows.length === 0) throw notFound(`no dataset with ${field} ${id}`);
    return datasetOf(rows[0]);
  }

  private async checkName(name: string, organizationId: string): Promise<string> {
    if (!name || name.trim() === '') throw invalidArgument('name must be a non-empty string');
    const rows = await this.store.query('SELECT id FROM datasets WHERE organization_id = ? AND name = ?', [organizationId, name]);
    if (rows.length > 0) throw alreadyExists(`organization ${organizationId} already has a dataset named "${name}"`);
    return name;
  }

  async create(md: Metadata, name: string, organizationId: string): Promise<string> {
    if (!organizationId) throw invalidArgument('organization_id is required');
    this.authorizer.checkOrg(await this.caller(md), organizationId, { role: 'owner' });
    await this.checkName(name, organizationId);
    const id = randomUUID();
    await this.store.execute('INSERT INTO datasets VALUES (?, ?, ?, ?)', [id, name, organizationId, new Date()]);
    return id;
  }

  async rename(md: Metadata, id: string, name: string): Promise<void> {
    const p = await this.caller(md);
    const dataset = await this.load(id);
    this.authorizer.checkOrg(p, dataset.organizationId, { role: 'owner', level: 'organization' });
    if (name === dataset.name) return;
    await this.checkName(name, dataset.organizationId);
    await this.store.execute('UPDATE datasets SET name = ? WHERE id = ?', [name, id]);
  }

  async delete(md: Metadata, id: string): Promise<void> {
    const p = await this.caller(md);
    const dataset = await this.load(id);
    this.authorizer.checkOrg(p, dataset.organizationId, { role: 'owner', level: 'organization' });
    const d = this.store.dialect;
    await this.store.transact(async (tx) => {
      await tx.execute(
        `UPDATE binary_data SET dataset_ids = ${listWithout(d, 'dataset_ids')}, tags = ${listWithout(d, 'tags')}
         WHERE ${listHas(d, 'dataset_ids')}`,
        [id, datasetTag(id), id],
      );
      await DatasetVersions.deleteAll(tx, id);
      await tx.execute('DELETE FROM datasets WHERE id = ?', [id]);
    });
  }

  async listByOrganization(md: Metadata, organizationId: string): Promise<Dataset[]> {
    if (!organizationId) throw invalidArgument('organization_id is required');
    this.authorizer.checkOrg(await this.caller(md), organizationId);
    return (await this.store.query('SELECT * FROM datasets WHERE organization_id = ? ORDER BY time_created, id', [organizationId])).map(datasetOf);
  }

  async listByIds(md: Metadata, ids: string[]): Promise<Dataset[]> {
    const p = await this.caller(md);
    if (ids.length === 0) throw invalidArgument('ids must list at least one dataset id');
    const byId = inList('id', ids);
    const rows = await this.store.query(`SELECT * FROM datasets WHERE ${byId.sql} ORDER BY time_created, id`, byId.params);
    const found = new Set(rows.map((r) => String(r.id)));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) throw notFound(`no dataset with id ${missing.join(', ')}`);
    for (const row of rows) this.authorizer.checkOrg(p, String(row.organization_id));
    return rows.map(datasetOf);
  }

  /** Loads a dataset and the binary data to change, checking the caller may change them. */
  private async membership(md: Metadata, binaryIds: string[], datasetId: string) {
    const p = await this.caller(md);
    const dataset = await this.load(datasetId, 'dataset_id');
    this.authorizer.checkOrg(p, dataset.organizationId, { role: 'owner' });
    const ids = idsOf(binaryIds);
    await checkBinaryAccess(this.store, this.authorizer, p, ids, { role: 'owner' });
    return { dataset, ids };
  }

  async addData(md: Metadata, binaryIds: string[], datasetId: string): Promise<void> {
    const { ids } = await this.membership(md, binaryIds, datasetId);
    await this.addMembers(ids, datasetId);
  }

  private addMembers(ids: string[], datasetId: string): Promise<number> {
    const byId = inList('binary_data_id', ids);
    const d = this.store.dialect;
    return this.store.execute(
      `UPDATE binary_data SET dataset_ids = ${listWith(d, 'dataset_ids')}, tags = ${listWith(d, 'tags')}
       WHERE ${byId.sql}`,
      [datasetId, datasetTag(datasetId), ...byId.params],
    );
  }

  async removeData(md: Metadata, binaryIds: string[], datasetId: string): Promise<void> {
    const { ids } = await this.membership(md, binaryIds, datasetId);
    const byId = inList('binary_data_id', ids);
    const d = this.store.dialect;
    await this.store.execute(
      `UPDATE binary_data SET dataset_ids = ${listWithout(d, 'dataset_ids')}, tags = ${listWithout(d, 'tags')}
       WHERE ${byId.sql}`,
      [datasetId, datasetTag(datasetId), ...byId.params],
    );
  }

  async merge(md: Metadata, datasetIds: string[], name: string, organizationId: string): Promise<string> {
    if (datasetIds.length === 0) throw invalidArgument('dataset_ids must list at least one dataset');
    const p = await this.caller(md);
    for (const id of datasetIds) {
      const dataset = await this.load(id, 'dataset_ids');
      if (dataset.organizationId !== organizationId) throw invalidArgument(`dataset ${id} does not belong to organization ${organizationId}`);
    }
    this.authorizer.checkOrg(p, organizationId, { role: 'owner' });
    const rows = await this.store.query(
      'SELECT binary_data_id, organization_id, location_id, robot_id FROM binary_data WHERE dataset_ids && CAST(? AS VARCHAR[])',
      [datasetIds],
    );
    // Merging tags every image of the datasets, so each one must be within the caller's scope, as for
    // AddBinaryDataToDatasetByIDs; checked before anything is created.
    const outside = rows.filter(
      (r) => !this.authorizer.covers(p, { organizationId: String(r.organization_id), locationId: String(r.location_id), machineId: String(r.robot_id) }),
    );
    if (outside.length > 0) {
      throw permissionDenied(
        `${outside.length} image${outside.length === 1 ? '' : 's'} of dataset_ids ${datasetIds.join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside the scope of ${describePrincipal(p)}` +
          ` (for example binary data ${String(outside[0].binary_data_id)}); merge with a key whose scope holds all of them`,
      );
    }
    const id = await this.create(md, name, organizationId);
    if (rows.length > 0)
      await this.addMembers(
        rows.map((r) => String(r.binary_data_id)),
        id,
      );
    return id;
  }
}

export interface DatasetServiceOptions {
  /**
   * Where ImportDataset keeps a zip while it arrives and is checked. Default: <data-dir>/imports of the
   * DuckDB Store (cleared at start by cloud-server.ts), else platform-cloud-imports in the OS temp dir.
   */
  importsDir?: string;
}

function defaultImportsDir(store: StoreWithBlobs): string {
  return store instanceof Store ? join(store.dataDir, 'imports') : join(tmpdir(), 'platform-cloud-imports');
}

/** Registers DatasetService on either TabularStore (the DuckDB Store, or a PgStore with its blobs). */
export function addDatasetService(server: Server, store: StoreWithBlobs, authorizer: Authorizer, options: DatasetServiceOptions = {}): void {
  const importsDir = options.importsDir ?? defaultImportsDir(store);
  const datasets = new Datasets(store, authorizer);
  const versions = new VersionOperations(datasets, store, authorizer);
  const parts = new PartDirectory(store);
  const impl: DatasetServiceServer = {
    ...versionHandlers(versions),
    exportDataset: serverStream((call) => exportDataset(versions, store, call)),
    importDataset: clientStream((call) => importDataset(versions, store, authorizer, parts, call, importsDir)),
    createDataset: unary(async (req, md) => ({ id: await datasets.create(md, req.name, req.organizationId) })),
    deleteDataset: unary(async (req, md) => {
      await datasets.delete(md, req.id);
      return {};
    }),
    renameDataset: unary(async (req, md) => {
      await datasets.rename(md, req.id, req.name);
      return {};
    }),
    listDatasetsByOrganizationId: unary(async (req, md) => ({ datasets: await datasets.listByOrganization(md, req.organizationId) })),
    listDatasetsByIDs: unary(async (req, md) => ({ datasets: await datasets.listByIds(md, req.ids) })),
    addBinaryDataToDatasetByIDs: unary(async (req, md) => {
      await datasets.addData(md, req.binaryDataIds, req.datasetId);
      return {};
    }),
    removeBinaryDataFromDatasetByIDs: unary(async (req, md) => {
      await datasets.removeData(md, req.binaryDataIds, req.datasetId);
      return {};
    }),
    mergeDatasets: unary(async (req, md) => ({ datasetId: await datasets.merge(md, req.datasetIds, req.name, req.organizationId) })),
  };
  server.addService(DatasetServiceService, impl);
}
