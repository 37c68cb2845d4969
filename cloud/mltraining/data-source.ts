// What training needs from the cloud's data: a dataset's images with their tags and bounding boxes,
// and their bytes. cloud-data-source.ts implements it over the cloud store; tests use a folder.
export interface TrainingBoundingBox {
  label: string;
  xMinNormalized: number;
  yMinNormalized: number;
  xMaxNormalized: number;
  yMaxNormalized: number;
}

export interface TrainingImage {
  binaryDataId: string;
  /** With the leading period, e.g. '.png'. */
  fileExt: string;
  tags: string[];
  boundingBoxes: TrainingBoundingBox[];
}

export interface TrainingDataSource {
  /** The organization that owns the dataset, or undefined when no dataset has that id. */
  datasetOrganization(datasetId: string): Promise<string | undefined>;
  /**
   * The dataset version a job trains on: `version` when the dataset has it (NOT_FOUND otherwise), or a
   * version made now when `version` is 0. Absent for sources that keep no versions (jobs read them live).
   */
  datasetVersion?(organizationId: string, datasetId: string, version: number): Promise<number>;
  /** The dataset's images (binary data whose MIME type is image/*), as the version froze them (live without one). */
  listImages(organizationId: string, datasetId: string, version?: number): Promise<TrainingImage[]>;
  readImage(organizationId: string, binaryDataId: string): Promise<Uint8Array>;
}
