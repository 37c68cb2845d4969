// Runs the residual aggregation stages in a worker thread, so that a pipeline that explodes ($densify over
// a huge range, a giant $bucketAuto) is stopped by terminating the thread instead of freezing the server.
import { aggregate } from 'mingo';
import { geoNear } from './geo-near.js';
import type { Stage } from './stages.js';

export interface MingoTask {
  docs: Record<string, unknown>[];
  stages: Stage[];
}

export default function evaluate({ docs, stages }: MingoTask): Record<string, unknown>[] {
  return evaluatePipeline(docs, stages);
}

export function evaluatePipeline(docs: Record<string, unknown>[], stages: Stage[]): Record<string, unknown>[] {
  let input = docs;
  let rest = stages;
  if (rest.length > 0 && '$geoNear' in rest[0]) {
    input = geoNear(input, rest[0].$geoNear);
    rest = rest.slice(1);
  }
  return rest.length === 0 ? input : (aggregate(input, rest, { scriptEnabled: false }) as Record<string, unknown>[]);
}
