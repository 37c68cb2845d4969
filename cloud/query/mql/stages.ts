// The aggregation stages TabularDataByMQL accepts: FACTS.md's allow-list, checked before anything runs.
import { invalidArgument, permissionDenied } from '../../../core/serving/status-error.js';

export type Stage = Record<string, unknown>;

export const ALLOWED_STAGES: readonly string[] = [
  '$addFields',
  '$bucket',
  '$bucketAuto',
  '$count',
  '$densify',
  '$fill',
  '$geoNear',
  '$group',
  '$limit',
  '$match',
  '$project',
  '$redact',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$set',
  '$setWindowFields',
  '$skip',
  '$sort',
  '$sortByCount',
  '$unset',
  '$unwind',
];
const allowed = new Set(ALLOWED_STAGES);

// Operators that run caller-supplied code ($where, $function, $accumulator) or reach other collections
// from inside an allowed stage. They are refused wherever they appear, at any depth.
const FORBIDDEN_OPERATORS = new Set(['$where', '$function', '$accumulator', '$lookup', '$unionWith', '$out', '$merge', '$graphLookup', '$facet', '$documents']);

/**
 * Bounds on operator arguments that would otherwise allocate without limit. Literal arguments are checked
 * here, before anything runs; what only shows at run time (a $range over a field, a string doubled in a
 * $reduce) is bounded by the evaluator's heap cap (mingo-pool.ts).
 */
export interface MqlBounds {
  /** Elements a literal $range may produce, and buckets a $bucketAuto may ask for. */
  maxRange: number;
  /** Largest $sample size. */
  maxSample: number;
  /** Values a literal $densify range may produce. */
  maxDensify: number;
  /** Deepest nesting of documents and arrays in the stages. */
  maxDepth: number;
}

function envBound(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got '${process.env[name]}'`);
  return value;
}

/** The bounds, settable from the environment of `platform-cloud serve` (see ../LIMITS.md). */
export const DEFAULT_MQL_BOUNDS: MqlBounds = {
  maxRange: envBound('PLATFORM_MQL_MAX_RANGE', 1_000_000),
  maxSample: envBound('PLATFORM_MQL_MAX_SAMPLE', 100_000),
  maxDensify: envBound('PLATFORM_MQL_MAX_DENSIFY', 1_000_000),
  maxDepth: envBound('PLATFORM_MQL_MAX_DEPTH', 64),
};

/** Throws INVALID_ARGUMENT or PERMISSION_DENIED naming the stage index and rule; returns the stages. */
export function checkStages(stages: unknown, bounds: MqlBounds = DEFAULT_MQL_BOUNDS): Stage[] {
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
    const body = (stage as Stage)[name];
    checkStageBounds(name, body, `query[${i}].${name}`, bounds);
    scanOperators(body, `query[${i}].${name}`, bounds, 1);
  });
  return stages as Stage[];
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function checkStageBounds(name: string, body: unknown, path: string, bounds: MqlBounds): void {
  const b = (body ?? {}) as Record<string, unknown>;
  if (name === '$sample') {
    const size = b.size;
    if (!isNumber(size) || !Number.isInteger(size) || size < 0 || size > bounds.maxSample) {
      throw invalidArgument(`${path}.size: must be an integer from 0 to ${bounds.maxSample} (PLATFORM_MQL_MAX_SAMPLE), got ${JSON.stringify(size)}`);
    }
  }
  if (name === '$bucketAuto' && isNumber(b.buckets) && b.buckets > bounds.maxRange) {
    throw invalidArgument(`${path}.buckets: at most ${bounds.maxRange} buckets (PLATFORM_MQL_MAX_RANGE), got ${b.buckets}`);
  }
  if (name === '$densify') {
    const range = (b.range ?? {}) as Record<string, unknown>;
    const limits = range.bounds;
    if (Array.isArray(limits) && limits.length === 2 && isNumber(range.step)) {
      const lo = limits[0] instanceof Date ? limits[0].getTime() : limits[0];
      const hi = limits[1] instanceof Date ? limits[1].getTime() : limits[1];
      const unitMs: Record<string, number> = { millisecond: 1, second: 1e3, minute: 6e4, hour: 36e5, day: 864e5, week: 6048e5 };
      const step = range.step * (typeof range.unit === 'string' ? (unitMs[range.unit] ?? 1) : 1);
      if (step <= 0) throw invalidArgument(`${path}.range.step: must be positive, got ${range.step}`);
      if (isNumber(lo) && isNumber(hi) && (hi - lo) / step > bounds.maxDensify) {
        throw invalidArgument(
          `${path}.range: would produce more than ${bounds.maxDensify} values (PLATFORM_MQL_MAX_DENSIFY); use a larger step or narrower bounds`,
        );
      }
    }
  }
}

function checkRange(args: unknown, path: string, bounds: MqlBounds): void {
  if (!Array.isArray(args) || args.length < 2) return;
  const [start, end, step = 1] = args as unknown[];
  if (!isNumber(start) || !isNumber(end) || !isNumber(step)) return;
  if (step === 0) throw invalidArgument(`${path}: the step of $range must not be 0`);
  const length = Math.ceil((end - start) / step);
  if (length > bounds.maxRange) {
    throw invalidArgument(`${path}: $range would produce ${length} elements; the limit is ${bounds.maxRange} (PLATFORM_MQL_MAX_RANGE)`);
  }
}

function scanOperators(value: unknown, path: string, bounds: MqlBounds, depth: number): void {
  if (typeof value === 'function') throw permissionDenied(`${path}: code is not allowed in a query`);
  if (value === null || typeof value !== 'object') return;
  if (depth > bounds.maxDepth) throw invalidArgument(`${path}: the stages nest deeper than ${bounds.maxDepth} levels`);
  if ((value as { _bsontype?: string })._bsontype === 'Code') throw permissionDenied(`${path}: BSON code is not allowed in a query`);
  for (const [key, v] of Object.entries(value)) {
    if (FORBIDDEN_OPERATORS.has(key)) throw permissionDenied(`${path}: operator ${key} is not allowed (no code execution and no other collections)`);
    if (key === '$range') checkRange(v, `${path}.$range`, bounds);
    scanOperators(v, `${path}.${key}`, bounds, depth + 1);
  }
}
