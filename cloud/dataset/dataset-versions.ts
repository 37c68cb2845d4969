// Frozen dataset versions: a version is a point-in-time copy of a dataset's image members, their
// tags, boxes, sizes and a train/valid/test split, numbered 1, 2, ... per dataset. Its rows are inserted
// once, in one transaction, and never updated; later tags, boxes, additions, removals or deletions of
// the live data leave it as it was (its blobs too: see binary-data.ts and blob-orphans.ts).
import { notFound } from '../../core/serving/status-error.js';
import type { DatasetVersion } from '../../gen/platform/app/dataset/v1/dataset.js';
import type { SqlSession, StoreWithBlobs, TabularRow } from '../store/tabular.js';
import { labelsOf, liveMembers, memberOfRow, type Member } from './members.js';
import type { SplitSpec } from './split.js';

/** Member rows per INSERT statement (16 parameters each). */
const insertBatch = 200;

const versionOf = (r: TabularRow): DatasetVersion => ({
  datasetId: String(r.dataset_id),
  version: Number(r.version),
  organizationId: String(r.organization_id),
  timeCreated: r.time_created as Date,
  split: { train: Number(r.split_train), valid: Number(r.split_valid), test: Number(r.split_test), seed: Number(r.split_seed) },
  imageCount: Number(r.image_count),
  trainCount: Number(r.train_count),
  validCount: Number(r.valid_count),
  testCount: Number(r.test_count),
  labels: ((r.labels as string[] | null) ?? []).slice(),
});

export class DatasetVersions {
  constructor(private readonly store: StoreWithBlobs) {}

  /** Freezes the dataset's members now into the next version and returns it. */
  async create(dataset: { id: string; organizationId: string }, spec: SplitSpec): Promise<DatasetVersion> {
    const members = await liveMembers(this.store, dataset.organizationId, dataset.id, spec);
    const count = (split: string) => members.filter((m) => m.split === split).length;
    const created = new Date();
    const version = await this.store.transact(async (tx) => {
      const next = await tx.query('SELECT coalesce(max(version), 0) + 1 AS next FROM dataset_versions WHERE dataset_id = ?', [dataset.id]);
      const number = Number(next[0].next);
      await tx.execute(`INSERT INTO dataset_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS VARCHAR[]))`, [
        dataset.id,
        number,
        dataset.organizationId,
        created,
        spec.train,
        spec.valid,
        spec.test,
        BigInt(spec.seed),
        members.length,
        count('train'),
        count('valid'),
        count('test'),
        labelsOf(members),
      ]);
      for (let start = 0; start < members.length; start += insertBatch) {
        const batch = members.slice(start, start + insertBatch);
        const row = '(?, ?, ?, ?, ?, CAST(? AS VARCHAR[]), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
        await tx.execute(
          `INSERT INTO dataset_version_members VALUES ${batch.map(() => row).join(', ')}`,
          batch.flatMap((m, i) => [
            dataset.id,
            number,
            start + i,
            m.binaryDataId,
            m.split,
            m.tags,
            JSON.stringify(m.boxes),
            m.width,
            m.height,
            m.fileExt,
            m.mimeType,
            m.blobKey,
            BigInt(m.fileSizeBytes),
            m.partId,
            m.componentName,
            m.timeRequested ?? null,
          ]),
        );
      }
      return number;
    });
    return this.get(dataset.id, version);
  }

  async list(datasetId: string): Promise<DatasetVersion[]> {
    return (await this.store.query('SELECT * FROM dataset_versions WHERE dataset_id = ? ORDER BY version', [datasetId])).map(versionOf);
  }

  /** The version, or NOT_FOUND naming it. */
  async get(datasetId: string, version: number): Promise<DatasetVersion> {
    const rows = await this.store.query('SELECT * FROM dataset_versions WHERE dataset_id = ? AND version = ?', [datasetId, version]);
    if (rows.length === 0) throw notFound(`dataset ${datasetId} has no version ${version}`);
    return versionOf(rows[0]);
  }

  /** The version's members in their frozen order. */
  async members(datasetId: string, version: number): Promise<Member[]> {
    await this.get(datasetId, version);
    const rows = await this.store.query('SELECT * FROM dataset_version_members WHERE dataset_id = ? AND version = ? ORDER BY position', [datasetId, version]);
    return rows.map(memberOfRow);
  }

  /**
   * Deletes every version of the dataset (inside the dataset's delete). Blobs that only these versions
   * named are left to the orphan sweep at the next start (cloud/store/blob-orphans.ts).
   */
  static async deleteAll(tx: SqlSession, datasetId: string): Promise<void> {
    await tx.execute('DELETE FROM dataset_version_members WHERE dataset_id = ?', [datasetId]);
    await tx.execute('DELETE FROM dataset_versions WHERE dataset_id = ?', [datasetId]);
  }
}
