// What the training form suggests: the labels a dataset holds (its images' tags and box labels) and the
// next model version not yet used for a model name.
import { dataApi } from '../api/data.js';
import type { ViewProps } from '../views.js';
import type { TrainingJobMetadata } from '../../../gen/platform/app/mltraining/v1/ml_training.js';

const DATASET_TAG_PREFIX = 'PLATFORM_DATASET_';

/** The dataset's labels: tags (without the dataset-membership tags) and bounding-box labels, sorted, once each. */
export async function datasetLabels(props: Pick<ViewProps, 'api' | 'orgId'>, datasetId: string): Promise<string[]> {
  const filter = { organizationIds: [props.orgId], datasetId };
  const [tags, boxes] = await Promise.all([props.api.call(dataApi.tagsByFilter, { filter }), props.api.call(dataApi.boundingBoxLabelsByFilter, { filter })]);
  return [...new Set([...tags.tags.filter((t) => !t.startsWith(DATASET_TAG_PREFIX)), ...boxes.labels])].sort();
}

/**
 * The next free version of a model: one past the highest `v<n>` (or plain number) its jobs used, keeping
 * that form; `v1` for a new model; for other version strings, the first `v<n>` not taken.
 */
export function nextVersion(jobs: TrainingJobMetadata[], modelName: string): string {
  const used = new Set(jobs.filter((j) => j.modelName === modelName).map((j) => j.modelVersion));
  let highest = 0;
  let prefix = 'v';
  for (const v of used) {
    const m = /^(v?)(\d+)$/.exec(v);
    if (m && Number(m[2]) >= highest) [highest, prefix] = [Number(m[2]), m[1]];
  }
  let n = highest + 1;
  while (used.has(`${prefix}${n}`)) n++;
  return `${prefix}${n}`;
}
