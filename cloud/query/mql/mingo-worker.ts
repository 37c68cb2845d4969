// Runs the residual aggregation stages in a worker thread, so that a pipeline that explodes ($densify over
// a huge range, a giant $bucketAuto) is stopped by terminating the thread instead of freezing the server.
import { aggregate } from 'mingo';
import type { ResultSizeLimits } from '../result-size.js';
import { parseBatches } from './document-scan.js';
import { geoNear } from './geo-near.js';
import type { Stage } from './stages.js';

/**
 * Documents either as objects (a pipeline sink) or as JSON batches straight from DuckDB. With
 * resultLimits, the child process refuses a result over them instead of sending it (mingo-child.ts).
 */
export type MingoTask = ({ docs: Record<string, unknown>[]; stages: Stage[] } | { batches: string[]; dateFields: string[]; stages: Stage[] }) & {
  resultLimits?: ResultSizeLimits;
};

export default function evaluate(task: MingoTask): Record<string, unknown>[] {
  const docs = 'docs' in task ? task.docs : parseBatches(task.batches, task.dateFields);
  return evaluatePipeline(docs, task.stages);
}

export function evaluatePipeline(docs: Record<string, unknown>[], stages: Stage[]): Record<string, unknown>[] {
  let input = docs;
  let rest = stages;
  if (rest.length > 0 && '$geoNear' in rest[0]) {
    input = geoNear(input, rest[0].$geoNear);
    rest = rest.slice(1);
  }
  // scriptEnabled: mingo implements $setWindowFields with an internal $function, which scriptEnabled: false
  // refuses. User code cannot reach it: checkStages refuses $function, $accumulator and $where at any depth.
  return rest.length === 0 ? input : (aggregate(input, rest, { scriptEnabled: true }) as Record<string, unknown>[]);
}
