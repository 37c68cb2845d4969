import test from 'ava';
import { planPushdown } from './pushdown.js';
import { FIELD_NAMES } from './reading-fields.js';

test('leading $match, $sort, $skip, $limit and $project all go to SQL', (t) => {
  const plan = planPushdown([
    { $match: { component_name: 'thermo', time_received: { $gte: new Date('2026-01-01T00:00:00Z') } } },
    { $sort: { time_received: -1 } },
    { $skip: 5 },
    { $limit: 10 },
    { $project: { component_name: 1, data: 1 } },
    { $group: { _id: null, n: { $sum: 1 } } },
  ]);
  t.is(plan.where.length, 2);
  t.regex(plan.where[0], /component_name = 'thermo'/);
  t.deepEqual(plan.orderBy, ['epoch_ms(time_received) DESC NULLS LAST']);
  t.is(plan.offset, 5);
  t.is(plan.limit, 10);
  t.deepEqual(plan.fields, ['_id', 'component_name', 'data']);
  t.deepEqual(plan.residual, [{ $group: { _id: null, n: { $sum: 1 } } }]);
});

test('$limit then $skip, and several $limit, combine like MongoDB', (t) => {
  const plan = planPushdown([{ $limit: 10 }, { $skip: 3 }, { $limit: 20 }]);
  t.is(plan.offset, 3);
  t.is(plan.limit, 7);
  t.deepEqual(plan.residual, []);
});

test('a nested-data condition is a prefilter: pushed, and kept in the residual $match', (t) => {
  const plan = planPushdown([{ $match: { component_name: 'thermo', 'data.readings.temperature': { $gt: 20 } } }, { $limit: 1 }]);
  t.is(plan.where.length, 2);
  t.regex(plan.where[1], /json_type/);
  t.deepEqual(plan.residual, [{ $match: { 'data.readings.temperature': { $gt: 20 } } }, { $limit: 1 }]);
  t.is(plan.limit, null, 'no $limit push-down past a residual $match');
});

test('stages that SQL cannot express stop the push-down in order', (t) => {
  t.deepEqual(planPushdown([{ $match: { component_name: { $regex: '^th' } } }]).where, []);
  const afterLimit = planPushdown([{ $limit: 5 }, { $match: { component_name: 'x' } }]);
  t.deepEqual(afterLimit.residual, [{ $match: { component_name: 'x' } }]);
  const jsonSort = planPushdown([{ $sort: { 'data.v': 1 } }, { $limit: 5 }]);
  t.deepEqual(jsonSort.residual, [{ $sort: { 'data.v': 1 } }, { $limit: 5 }]);
  const computed = planPushdown([{ $project: { x: '$data.v' } }]);
  t.deepEqual(computed.fields, FIELD_NAMES);
  t.is(computed.residual.length, 1);
});

test('projections: _id alone, exclusions, and _id: 0', (t) => {
  t.deepEqual(planPushdown([{ $project: { _id: 1 } }]).fields, ['_id']);
  t.deepEqual(
    planPushdown([{ $project: { data: 0, _id: 0 } }]).fields,
    FIELD_NAMES.filter((f) => f !== 'data' && f !== '_id'),
  );
  t.deepEqual(planPushdown([{ $project: { tags: true, _id: 0 } }]).fields, ['tags']);
});

test('$or and $nor of exact conditions are exact; $and keeps the exact part', (t) => {
  const or = planPushdown([{ $match: { $or: [{ component_name: 'a' }, { tags: 'x' }] } }]);
  t.deepEqual(or.residual, []);
  const nor = planPushdown([{ $match: { $nor: [{ robot_name: null }] } }]);
  t.deepEqual(nor.residual, []);
  const mixed = planPushdown([{ $match: { $and: [{ component_name: 'a' }, { robot_name: { $regex: 'x' } }] } }]);
  t.is(mixed.where.length, 1);
  t.is(mixed.residual.length, 1);
});

test('only the fields a document-replacing residual stage depends on are fetched', (t) => {
  const group = planPushdown([{ $match: { component_name: 'a' } }, { $group: { _id: '$component_name', top: { $max: '$data.readings.temperature' } } }]);
  t.is(group.group, undefined, '$max is left to mingo');
  t.deepEqual(group.fields, ['component_name', 'data']);
  t.deepEqual(planPushdown([{ $count: 'n' }]).fields, ['_id']);
  const matched = planPushdown([{ $match: { 'data.v': { $gt: 1 } } }, { $sort: { time_received: 1 } }, { $count: 'n' }]);
  t.deepEqual(matched.fields, ['time_received', 'data']);
  t.is(planPushdown([{ $addFields: { all: '$$ROOT' } }, { $count: 'n' }]).fields.length, FIELD_NAMES.length);
  t.is(planPushdown([{ $limit: 5 }, { $addFields: { x: 1 } }]).fields.length, FIELD_NAMES.length, 'no replacing stage: whole documents');
  t.is(planPushdown([{ $redact: '$$KEEP' }, { $count: 'n' }]).fields.length, FIELD_NAMES.length);
});

test('$group by a top-level text field with counts, $sum and $avg runs in SQL', (t) => {
  const plan = planPushdown([
    { $match: { component_name: { $in: ['a', 'b'] } } },
    { $group: { _id: '$component_name', n: { $sum: 1 }, c: { $count: {} }, s: { $sum: '$data.readings.v' }, a: { $avg: '$data.readings.v' } } },
    { $sort: { n: -1 } },
  ]);
  t.truthy(plan.group);
  t.is(plan.group!.groupBy, 'component_name');
  t.deepEqual(plan.residual, [{ $sort: { n: -1 } }]);
  t.truthy(planPushdown([{ $group: { _id: null, n: { $sum: 1 } } }]).group);
  for (const group of [
    { _id: '$data.readings.v', n: { $sum: 1 } },
    { _id: '$component_name', n: { $first: '$robot_name' } },
    { _id: '$component_name', n: { $sum: '$component_name' } },
    { _id: { c: '$component_name' }, n: { $sum: 1 } },
  ]) {
    t.is(planPushdown([{ $group: group }]).group, undefined, JSON.stringify(group));
  }
  t.is(planPushdown([{ $sort: { component_name: 1 } }, { $group: { _id: null, n: { $sum: 1 } } }]).group, undefined, 'not after a pushed $sort');
});
