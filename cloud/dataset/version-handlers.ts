// The DatasetService calls on versions: CreateDatasetVersion (owners), ListDatasetVersions and
// GetDatasetVersion (any role of the dataset's organization).
import type { Metadata } from '@grpc/grpc-js';
import { invalidArgument } from '../../core/shared/status-error.js';
import type { Dataset, DatasetServiceServer, DatasetVersion, DatasetVersionMember } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { unary } from '../server/handlers.js';
import type { Store } from '../store/store.js';
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
    store: Store,
    private readonly authorizer: Authorizer,
  ) {
    this.versions = new DatasetVersions(store);
  }

  /** The dataset, after checking the caller may read it (or, with `owner`, change it). */
  async readable(md: Metadata, datasetId: string, owner = false) {
    const p = await this.datasets.caller(md);
    const dataset = await this.datasets.load(datasetId, 'dataset_id');
    this.authorizer.checkOrg(p, dataset.organizationId, owner ? { role: 'owner' } : {});
    return dataset;
  }

  async create(md: Metadata, datasetId: string, split: Partial<SplitSpec> | undefined): Promise<DatasetVersion> {
    const spec = checkSplit(split);
    const dataset = await this.readable(md, datasetId, true);
    return this.versions.create(dataset, spec);
  }
}

export function versionHandlers(
  datasets: DatasetLookup,
  store: Store,
  authorizer: Authorizer,
): Pick<DatasetServiceServer, 'createDatasetVersion' | 'listDatasetVersions' | 'getDatasetVersion'> {
  const ops = new VersionOperations(datasets, store, authorizer);
  return {
    createDatasetVersion: unary(async (req, md) => ({ version: await ops.create(md, req.datasetId, req.split) })),
    listDatasetVersions: unary(async (req, md) => {
      await ops.readable(md, req.datasetId);
      return { versions: await ops.versions.list(req.datasetId) };
    }),
    getDatasetVersion: unary(async (req, md) => {
      await ops.readable(md, req.datasetId);
      const number = checkVersionNumber(req.version);
      const version = await ops.versions.get(req.datasetId, number);
      return { version, members: (await ops.versions.members(req.datasetId, number)).map(memberMessage) };
    }),
  };
}
