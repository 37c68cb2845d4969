// Dataset membership is recorded twice on a binary datum: its dataset id in dataset_ids, and the tag
// PLATFORM_DATASET_{id} (SPEC.md "Data records"). Every path that changes one changes the other.
export const datasetTagPrefix = 'PLATFORM_DATASET_';

export const datasetTag = (id: string): string => `${datasetTagPrefix}${id}`;

/** The dataset ids that membership tags among `tags` name. */
export function datasetIdsOfTags(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(datasetTagPrefix) && t.length > datasetTagPrefix.length).map((t) => t.slice(datasetTagPrefix.length));
}
