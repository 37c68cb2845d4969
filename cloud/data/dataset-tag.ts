// Dataset membership is recorded twice on a binary datum: its dataset id in dataset_ids, and the tag
// PLATFORM_DATASET_{id} (SPEC.md "Data records"). Every path that changes one changes the other.
import { inList } from './filter.js';
import type { TabularStore } from '../store/tabular.js';

export const datasetTagPrefix = 'PLATFORM_DATASET_';

export const datasetTag = (id: string): string => `${datasetTagPrefix}${id}`;

/** The dataset ids that membership tags among `tags` name. */
export function datasetIdsOfTags(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(datasetTagPrefix) && t.length > datasetTagPrefix.length).map((t) => t.slice(datasetTagPrefix.length));
}

/** The ids among `ids` that are not datasets of the organization: data joins only its own organization's datasets. */
export async function missingDatasets(store: TabularStore, organizationId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const byId = inList('id', ids);
  const rows = await store.query(`SELECT id FROM datasets WHERE organization_id = ? AND ${byId.sql}`, [organizationId, ...byId.params]);
  const found = new Set(rows.map((r) => String(r.id)));
  return ids.filter((id) => !found.has(id));
}
