// Which reading fields a residual pipeline can observe. When the residual reaches a stage that replaces
// every document ($group, $count, ...) having only looked at some fields, SQL need not fetch the others:
// materialising 3 columns instead of 16 is most of the cost of a large $match + $group.
import { READING_FIELDS } from './reading-fields.js';
import type { Stage } from './stages.js';

const REPLACING = new Set(['$group', '$count', '$bucket', '$bucketAuto', '$sortByCount']);
// Stages whose field use shows up as '$field' strings or as keys (filters, sort keys, projections).
const TRANSPARENT = new Set(['$match', '$sort', '$limit', '$skip', '$addFields', '$set', '$unwind', '$unset', '$project', '$replaceRoot', '$replaceWith']);

/** The top-level fields the pipeline depends on, or null when it may depend on whole documents. */
export function fieldDependencies(stages: readonly Stage[]): Set<string> | null {
  const used = new Set<string>();
  for (const stage of stages) {
    const [name, spec] = Object.entries(stage)[0];
    if (!REPLACING.has(name) && !TRANSPARENT.has(name)) return null;
    if (!collect(spec, used, name === '$match' || name === '$sort' || name === '$project')) return null;
    if (REPLACING.has(name)) return new Set([...used].filter((f) => f in READING_FIELDS));
  }
  return null;
}

/** Adds field roots named by '$path' strings (and by keys, where keys are paths). False on $$ROOT-like use. */
function collect(value: unknown, used: Set<string>, keysArePaths: boolean): boolean {
  if (typeof value === 'string') {
    if (value.startsWith('$$')) return !/^\$\$(ROOT|CURRENT)\b/.test(value);
    if (value.startsWith('$')) used.add(value.slice(1).split('.')[0]);
    return true;
  }
  if (value === null || typeof value !== 'object' || value instanceof Date) return true;
  if (Array.isArray(value)) return value.every((v) => collect(v, used, keysArePaths));
  for (const [key, v] of Object.entries(value)) {
    if (key === '$jsonSchema' || (key === '$expr' && v === '$$ROOT')) return false;
    if (keysArePaths && !key.startsWith('$')) used.add(key.split('.')[0]);
    if (!collect(v, used, keysArePaths)) return false;
  }
  return true;
}
