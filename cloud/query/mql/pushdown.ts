// Plans how much of a pipeline's leading $match/$sort/$skip/$limit/$project DuckDB can do. SQL applies
// WHERE, then ORDER BY, then OFFSET/LIMIT, then the column list; stages are pushed while they fit that
// order and translate exactly. What is left (the residual) runs in mingo on the rows SQL returns.
import { invalidArgument } from '../../../core/serving/status-error.js';
import { fieldDependencies } from './field-dependencies.js';
import { groupSql, type GroupSql } from './group-sql.js';
import { splitFilter } from './match-sql.js';
import { FIELD_NAMES, READING_FIELDS } from './reading-fields.js';
import { isPlainObject } from './sql-literals.js';
import type { Stage } from './stages.js';

export interface PushdownPlan {
  where: string[];
  /** ORDER BY terms; the natural order (seq) is always the last tie-breaker. */
  orderBy: string[];
  offset: number;
  limit: number | null;
  /** The fields each SQL row carries (and so each document starts with). */
  fields: string[];
  /** A $group done by SQL: rows are then its groups, not readings. */
  group?: GroupSql;
  residual: Stage[];
}

export function planPushdown(stages: readonly Stage[]): PushdownPlan {
  const plan = pushStages(stages);
  // A $group right after exactly translated $match stages (no order, slice or projection yet) can run in SQL.
  const first = plan.residual[0];
  if (first && '$group' in first && plan.orderBy.length === 0 && plan.limit === null && plan.offset === 0 && plan.fields.length === FIELD_NAMES.length) {
    const group = groupSql(first.$group);
    if (group) {
      plan.group = group;
      plan.residual = plan.residual.slice(1);
      return plan;
    }
  }
  if (plan.fields.length === FIELD_NAMES.length) {
    const needed = fieldDependencies(plan.residual);
    if (needed) {
      const fields = FIELD_NAMES.filter((f) => needed.has(f));
      // A row needs at least one column; _id (seq) is the cheapest.
      plan.fields = fields.length > 0 ? fields : ['_id'];
    }
  }
  return plan;
}

function pushStages(stages: readonly Stage[]): PushdownPlan {
  const plan: PushdownPlan = { where: [], orderBy: [], offset: 0, limit: null, fields: [...FIELD_NAMES], residual: [] };
  let phase = 0; // 0 where, 1 sorted, 2 sliced, 3 projected: a stage may only follow what SQL does before it.
  let i = 0;
  for (; i < stages.length; i++) {
    const [name, spec] = Object.entries(stages[i])[0];
    if (name === '$match' && phase === 0) {
      if (!isPlainObject(spec)) throw invalidArgument(`query[${i}].$match: must be a document`);
      const { pushed, residual } = splitFilter(spec);
      plan.where.push(...pushed.map((p) => p.sql));
      if (Object.keys(residual).length > 0) {
        // The pushed part is a prefilter; the rest of the pipeline, this $match's remainder first, stays.
        plan.residual = [{ $match: residual }, ...stages.slice(i + 1)];
        return plan;
      }
      continue;
    }
    if (name === '$sort' && phase === 0) {
      const terms = sortTerms(spec);
      if (!terms) break;
      plan.orderBy = terms;
      phase = 1;
      continue;
    }
    if ((name === '$skip' || name === '$limit') && phase <= 2) {
      const n = spec as number;
      if (!Number.isSafeInteger(n) || n < 0 || (name === '$limit' && n === 0)) {
        throw invalidArgument(`query[${i}].${name}: must be a ${name === '$limit' ? 'positive' : 'non-negative'} integer`);
      }
      if (name === '$skip') {
        plan.offset += n;
        if (plan.limit !== null) plan.limit = Math.max(0, plan.limit - n);
      } else {
        plan.limit = plan.limit === null ? n : Math.min(plan.limit, n);
      }
      phase = 2;
      continue;
    }
    if (name === '$project' && phase <= 2) {
      const fields = projectedFields(spec);
      if (!fields) break;
      plan.fields = fields;
      i++;
      break;
    }
    break;
  }
  plan.residual = stages.slice(i);
  return plan;
}

function sortTerms(spec: unknown): string[] | null {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) return null;
  const terms: string[] = [];
  for (const [field, dir] of Object.entries(spec)) {
    const f = READING_FIELDS[field];
    if (!f || (dir !== 1 && dir !== -1) || f.kind === 'json' || f.kind === 'tags') return null;
    // Documents carry millisecond Dates: sort on whole milliseconds so ties fall back to natural order as in mingo.
    const key = f.kind === 'date' ? `epoch_ms(${f.column})` : f.column;
    terms.push(dir === 1 ? `${key} ASC NULLS FIRST` : `${key} DESC NULLS LAST`);
  }
  return terms;
}

/** The fields a plain inclusion or exclusion of top-level fields keeps, or null if mingo must do it. */
function projectedFields(spec: unknown): string[] | null {
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) return null;
  const entries = Object.entries(spec);
  if (!entries.every(([k, v]) => READING_FIELDS[k] && [0, 1, true, false].includes(v as number | boolean))) return null;
  const on = (v: unknown) => v === 1 || v === true;
  const nonId = entries.filter(([k]) => k !== '_id');
  const idSpec = entries.find(([k]) => k === '_id');
  const keepId = idSpec ? on(idSpec[1]) : true;
  const inclusion = nonId.length === 0 ? keepId : nonId.some(([, v]) => on(v));
  if (inclusion && nonId.some(([, v]) => !on(v))) return null; // MongoDB rejects the mix; let mingo say so
  if (inclusion) return FIELD_NAMES.filter((f) => (f === '_id' ? keepId : nonId.some(([k]) => k === f)));
  const dropped = new Set(entries.filter(([, v]) => !on(v)).map(([k]) => k));
  return FIELD_NAMES.filter((f) => !dropped.has(f));
}
