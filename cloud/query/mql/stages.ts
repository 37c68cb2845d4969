// The aggregation stages TabularDataByMQL accepts: FACTS.md's allow-list, checked before anything runs.
import { invalidArgument, permissionDenied } from '../../../core/shared/status-error.js';

export type Stage = Record<string, unknown>;

export const ALLOWED_STAGES: readonly string[] = [
  '$addFields', '$bucket', '$bucketAuto', '$count', '$densify', '$fill', '$geoNear', '$group', '$limit', '$match',
  '$project', '$redact', '$replaceRoot', '$replaceWith', '$sample', '$set', '$setWindowFields', '$skip', '$sort',
  '$sortByCount', '$unset', '$unwind',
];
const allowed = new Set(ALLOWED_STAGES);

// Operators that run caller-supplied code ($where, $function, $accumulator) or reach other collections
// from inside an allowed stage. They are refused wherever they appear, at any depth.
const FORBIDDEN_OPERATORS = new Set(['$where', '$function', '$accumulator', '$lookup', '$unionWith', '$out', '$merge', '$graphLookup', '$facet', '$documents']);

/** Throws INVALID_ARGUMENT or PERMISSION_DENIED naming the stage index and rule; returns the stages. */
export function checkStages(stages: unknown): Stage[] {
  if (!Array.isArray(stages) || stages.length === 0) throw invalidArgument('query: must be a non-empty list of aggregation stages');
  stages.forEach((stage, i) => {
    if (stage === null || typeof stage !== 'object' || Array.isArray(stage)) throw invalidArgument(`query[${i}]: a stage must be a document`);
    const keys = Object.keys(stage);
    if (keys.length !== 1) throw invalidArgument(`query[${i}]: a stage must have exactly one field (the stage name), got ${keys.length}`);
    const name = keys[0];
    if (!allowed.has(name)) {
      throw invalidArgument(`query[${i}]: stage ${name} is not allowed; allowed stages are ${ALLOWED_STAGES.join(' ')}`);
    }
    if (name === '$geoNear' && i !== 0) throw invalidArgument(`query[${i}]: $geoNear is only valid as the first stage`);
    scanOperators((stage as Stage)[name], `query[${i}].${name}`);
  });
  return stages as Stage[];
}

function scanOperators(value: unknown, path: string): void {
  if (typeof value === 'function') throw permissionDenied(`${path}: code is not allowed in a query`);
  if (value === null || typeof value !== 'object') return;
  if ((value as { _bsontype?: string })._bsontype === 'Code') throw permissionDenied(`${path}: BSON code is not allowed in a query`);
  for (const [key, v] of Object.entries(value)) {
    if (FORBIDDEN_OPERATORS.has(key)) throw permissionDenied(`${path}: operator ${key} is not allowed (no code execution and no other collections)`);
    scanOperators(v, `${path}.${key}`);
  }
}
