// TrainingDataSource over the cloud's tables and blobs (either backend, cloud/store/tabular.ts): a dataset is the binary data whose
// dataset_ids contain its id; labels come from binary_data.tags and table bounding_boxes.
import { DatasetVersions } from '../dataset/dataset-versions.js';
import { defaultSplit } from '../dataset/split.js';
import { listHas } from '../store/list-sql.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import type { TrainingDataSource, TrainingImage } from './data-source.js';

export class CloudTrainingDataSource implements TrainingDataSource {
  private readonly versions: DatasetVersions;

  constructor(private readonly store: StoreWithBlobs) {
    this.versions = new DatasetVersions(store);
  }

  /** A job that names no version trains on one made for it with the default split. */
  async datasetVersion(organizationId: string, datasetId: string, version: number): Promise<number> {
    if (version > 0) return (await this.versions.get(datasetId, version)).version;
    return (await this.versions.create({ id: datasetId, organizationId }, defaultSplit)).version;
  }

  async datasetOrganization(datasetId: string): Promise<string | undefined> {
    const rows = await this.store.query('SELECT organization_id FROM datasets WHERE id = ?', [datasetId]);
    return rows.length ? String(rows[0].organization_id) : undefined;
  }

  async listImages(organizationId: string, datasetId: string, version?: number): Promise<TrainingImage[]> {
    if (version) {
      return (await this.versions.members(datasetId, version)).map((m) => ({
        binaryDataId: m.binaryDataId,
        fileExt: m.fileExt,
        tags: m.tags,
        boundingBoxes: m.boxes.map(({ id: _id, ...box }) => box),
      }));
    }
    const member = `organization_id = ? AND ${listHas(this.store.dialect, 'dataset_ids')} AND mime_type LIKE 'image/%' AND NOT internal`;
    const rows = await this.store.query(`SELECT binary_data_id, file_ext, tags FROM binary_data WHERE ${member} ORDER BY seq`, [organizationId, datasetId]);
    const boxes = await this.store.query(
      `SELECT binary_data_id, label, x_min_normalized, y_min_normalized, x_max_normalized, y_max_normalized
         FROM bounding_boxes WHERE binary_data_id IN (SELECT binary_data_id FROM binary_data WHERE ${member})
         ORDER BY binary_data_id, id`,
      [organizationId, datasetId],
    );
    const images = new Map<string, TrainingImage>();
    for (const row of rows) {
      const id = String(row.binary_data_id);
      const ext = String(row.file_ext ?? '');
      images.set(id, {
        binaryDataId: id,
        fileExt: ext && !ext.startsWith('.') ? `.${ext}` : ext,
        tags: ((row.tags as string[] | null) ?? []).slice(),
        boundingBoxes: [],
      });
    }
    for (const box of boxes) {
      images.get(String(box.binary_data_id))?.boundingBoxes.push({
        label: String(box.label),
        xMinNormalized: Number(box.x_min_normalized),
        yMinNormalized: Number(box.y_min_normalized),
        xMaxNormalized: Number(box.x_max_normalized),
        yMaxNormalized: Number(box.y_max_normalized),
      });
    }
    return [...images.values()];
  }

  async readImage(organizationId: string, binaryDataId: string): Promise<Uint8Array> {
    // A version keeps the content of data deleted after it was made.
    const rows = await this.store.query(
      `SELECT blob_key FROM binary_data WHERE binary_data_id = ? AND organization_id = ?
       UNION ALL SELECT blob_key FROM dataset_version_members WHERE binary_data_id = ? AND dataset_id IN (SELECT id FROM datasets WHERE organization_id = ?)
       LIMIT 1`,
      [binaryDataId, organizationId, binaryDataId, organizationId],
    );
    if (!rows.length) throw new Error(`binary data ${binaryDataId} is gone from organization ${organizationId}`);
    const content = await this.store.blobs.get(String(rows[0].blob_key));
    if (!content) throw new Error(`the content of binary data ${binaryDataId} is missing from the blob store`);
    return content;
  }
}
