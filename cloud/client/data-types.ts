// The data client's filter and option types, and the filter builder: what callers of DataClient pass in
// and get back, apart from the generated messages.
import { Filter, Order, TagsFilterType, type BinaryMetadata, type CaptureMetadata } from '../../gen/platform/app/data/v1/data.js';

/** Filter fields (FACTS.md), all optional; startTime/endTime set the interval. */
export type FilterInput = Partial<Omit<Filter, 'interval' | 'tagsFilter'>> & {
  startTime?: Date;
  endTime?: Date;
  interval?: { start?: Date; end?: Date };
  tagsFilter?: { type?: TagsFilterType; tags?: string[] };
};

export function createFilter(input: FilterInput = {}): Filter {
  const { startTime, endTime, interval, tagsFilter, ...rest } = input;
  const start = interval?.start ?? startTime;
  const end = interval?.end ?? endTime;
  return Filter.fromPartial({
    ...rest,
    interval: start || end ? { start, end } : undefined,
    tagsFilter: tagsFilter ? { type: tagsFilter.type ?? TagsFilterType.TAGS_FILTER_TYPE_UNSPECIFIED, tags: tagsFilter.tags ?? [] } : undefined,
  });
}

export interface TabularDataPoint {
  data: Record<string, unknown>;
  metadata: CaptureMetadata;
  timeRequested?: Date;
  timeReceived?: Date;
}

export interface BinaryDataRecord {
  binary: Uint8Array;
  metadata: BinaryMetadata;
}

export interface PageOptions {
  limit?: number;
  sortOrder?: Order;
  last?: string;
  countOnly?: boolean;
  includeInternalData?: boolean;
  /** Writes the results to this file as JSON, too. */
  dest?: string;
}

export interface UploadOptions {
  methodParameters?: Record<string, unknown>;
  tags?: string[];
  datasetIds?: string[];
  /**
   * Names the upload (unique per part, at most 128 characters): the cloud stores it with the data and
   * answers a repeated id with the ids of the first upload, storing nothing twice.
   */
  uploadId?: string;
}

export interface FileUploadOptions extends UploadOptions {
  componentType?: string;
  componentName?: string;
  methodName?: string;
  fileName?: string;
  fileExtension?: string;
}

export interface StreamingUploadOptions extends UploadOptions {
  componentType?: string;
  componentName?: string;
  methodName?: string;
  dataRequestTimes?: [Date, Date];
}

/** Chunk size of file and streaming uploads. */
export const uploadChunkBytes = 64 * 1024;
