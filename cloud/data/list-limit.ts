// The most items one list of a request may hold: the tags of a tags filter, the location ids, MIME types
// and bounding-box labels of a filter, and the tags that AddTags / RemoveTags name. Real filters name a
// handful; the bound keeps one call a bounded amount of work (a 100,000-tag filter once ended in a
// stack overflow reported as INTERNAL). Documented in cloud/query/LIMITS.md.
import { invalidArgument } from '../../core/serving/status-error.js';

export const MAX_LIST_ITEMS = 1000;

/** Throws INVALID_ARGUMENT naming `field` when `list` holds more than MAX_LIST_ITEMS items. */
export function checkListSize<T>(field: string, list: readonly T[]): readonly T[] {
  if (list.length > MAX_LIST_ITEMS) throw invalidArgument(`${field}: at most ${MAX_LIST_ITEMS} items, got ${list.length}`);
  return list;
}
