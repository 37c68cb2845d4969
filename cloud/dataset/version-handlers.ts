// The DatasetService calls on versions: CreateDatasetVersion (owners), ListDatasetVersions and
// GetDatasetVersion (any role of the dataset's organization).
import type { Metadata } from '@grpc/grpc-js';
import { invalidArgument, permissionDenied } from '../../core/serving/status-error.js';
import type { Dataset, DatasetServiceServer, DatasetVersion, DatasetVersionMember } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { Authorizer } from '../auth/authorizer.js';
import { describePrincipal, type KeyPrincipal } from '../auth/principal.js';
import { inList } from '../data/filter.js';
import { unary } from '../kit/handlers.js';
import { listHas } from '../store/list-sql.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { DatasetVersions } from './dataset-versions.js';
import type { Member } from './members.js';
import { checkSplit, type SplitSpec } from './split.js';

export const memberMessage = (m: Member): DatasetVersionMember => ({
  binaryDataId: m.binaryDataId,
  split: m.split,
  tags: m.tags,
  boundingBoxes: m.boxes.map((b) => ({ ...b })),
  width: m.width,
  height: m.height,
  fileExt: m.fileExt,
});

/** Checks a version number from a request: a whole number >= 1 (0 where `live` allows the live dataset). */
export function checkVersionNumber(version: number, live = false): number {
  if (!Number.isInteger(version) || version < (live ? 0 : 1))
    throw invalidArgument(`version must be ${live ? '0 (live) or ' : ''}a version number >= 1, got ${version}`);
  return version;
}

/** What the version calls need of the dataset service (dataset-service.ts), without importing it. */
export interface DatasetLookup {
  caller(md: Metadata): Promise<KeyPrincipal>;
  load(id: string, field?: string): Promise<Dataset>;
}

/** Version operations with their permission checks, shared by the handlers and by ML training. */
export class VersionOperations {
  readonly versions: DatasetVersions;

  constructor(
    private readonly datasets: DatasetLookup,
    private readonly store: StoreWithBlobs,
    private readonly authorizer: Authorizer,
  ) {
    this.versions = new DatasetVersions(store);
  }

  /** The dataset and the caller, after checking the caller's organization and role (owner to change it). */
  async readable(md: Metadata, datasetId: string, owner = false): Promise<Dataset & { principal: KeyPrincipal }> {
    const p = await this.datasets.caller(md);
    const dataset = await this.datasets.load(datasetId, 'dataset_id');
    this.authorizer.checkOrg(p, dataset.organizationId, owner ? { role: 'owner' } : {});
    return { ...dataset, principal: p };
  }

  /**
   * A version shows (and an export hands out) every image it holds, so a key narrower than its
   * organization must hold all of their parts in its scope, as MergeDatasets asks (PERMISSION_DENIED
   * naming one outside it).
   */
  async checkScope(p: KeyPrincipal, partIds: readonly string[], what: string): Promise<void> {
    if (p.scope.type === 'organization') return;
    const unique = [...new Set(partIds)];
    if (unique.length === 0) return;
    const byId = inList('id', unique);
    const rows = await this.store.query(`SELECT id, organization_id, location_id, machine_id FROM machine_parts WHERE ${byId.sql}`, byId.params);
    const outside = rows.filter(
      (r) => !this.authorizer.covers(p, { organizationId: String(r.organization_id), locationId: String(r.location_id), machineId: String(r.machine_id) }),
    );
    if (outside.length > 0) {
      throw permissionDenied(
        `images of ${what} come from part ${String(outside[0].id)}, outside the scope of ${describePrincipal(p)}; use a key whose scope holds all of them`,
      );
    }
  }

  async create(md: Metadata, datasetId: string, split: Partial<SplitSpec> | undefined): Promise<DatasetVersion> {
    const spec = checkSplit(split);
    const dataset = await this.readable(md, datasetId, true);
    const parts = await this.store.query(`SELECT DISTINCT part_id FROM binary_data WHERE ${listHas(this.store.dialect, 'dataset_ids')}`, [datasetId]);
    await this.checkScope(
      dataset.principal,
      parts.map((r) => String(r.part_id)),
      `dataset ${datasetId}`,
    );
    return this.versions.create(dataset, spec);
  }

  /** The version's members, after checking the caller may see all of them. */
  async readMembers(md: Metadata, datasetId: string, version: number): Promise<Member[]> {
    const dataset = await this.readable(md, datasetId);
    const members = await this.versions.members(datasetId, version);
    await this.checkScope(
      dataset.principal,
      members.map((m) => m.partId),
      `dataset ${datasetId} version ${version}`,
    );
    return members;
  }
}

export function versionHandlers(ops: VersionOperations): Pick<DatasetServiceServer, 'createDatasetVersion' | 'listDatasetVersions' | 'getDatasetVersion'> {
  return {
    createDatasetVersion: unary(async (req, md) => ({ version: await ops.create(md, req.datasetId, req.split) })),
    listDatasetVersions: unary(async (req, md) => {
      await ops.readable(md, req.datasetId);
      return { versions: await ops.versions.list(req.datasetId) };
    }),
    getDatasetVersion: unary(async (req, md) => {
      const number = checkVersionNumber(req.version);
      const members = await ops.readMembers(md, req.datasetId, number);
      return { version: await ops.versions.get(req.datasetId, number), members: members.map(memberMessage) };
    }),
  };
}
