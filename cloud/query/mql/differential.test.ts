// Differential test: random pipelines over random documents give the same results through the engine
// (SQL push-down + mingo) as through mingo alone over every document in natural order.
import test from 'ava';
import { aggregate } from 'mingo';
import { MqlRunner } from './mql-runner.js';
import { MingoPool } from './mingo-pool.js';
import { planPushdown } from './pushdown.js';
import { createTabularFixture, type TabularFixture, type Reading } from '../testing/tabular-fixture.js';
import type { Stage } from './stages.js';

let seed = 20260601;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (n: number) => Math.floor(rand() * n);

const NAMES = ['alpha', 'beta', 'Gamma', 'delta'];
const ROBOTS = ['r1', 'r2', 'r3'];
const TAGS = ['x', 'y', 'z'];
const T0 = Date.parse('2026-03-01T00:00:00Z');

function randomValue(): unknown {
  return pick([() => int(100), () => int(1000) / 10, () => pick(['a', 'b', 'c']), () => [int(10), int(10)], () => null, () => true, () => undefined])();
}

function randomReading(): Reading {
  const readings: Record<string, unknown> = {};
  for (const k of ['v', 'w']) {
    const v = randomValue();
    if (v !== undefined) readings[k] = v;
  }
  const data: Record<string, unknown> = rand() < 0.15 ? { readings: [{ v: int(50) }, { v: int(50) }] } : { readings };
  if (rand() < 0.3) data.nested = { deep: { v: int(20) } };
  return {
    organization_id: rand() < 0.9 ? 'org-d' : 'org-other',
    component_name: pick(NAMES),
    robot_name: rand() < 0.2 ? null : pick(ROBOTS),
    tags: TAGS.filter(() => rand() < 0.4),
    time_received: new Date(0),
    // Microseconds, so that the millisecond Dates of documents and the column's precision must agree.
    time_received_text: new Date(T0 + int(20) * 1000).toISOString().replace('Z', `${pick(['', '001', '999', '500'])}Z`),
    data,
  };
}

const OPS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin'] as const;

function randomCondition(): Record<string, unknown> {
  const kind = int(7);
  const op = pick(OPS);
  const wrap = (v: unknown, list: () => unknown[]) => (op === '$in' || op === '$nin' ? { [op]: list() } : op === '$eq' && rand() < 0.5 ? v : { [op]: v });
  switch (kind) {
    case 0:
      return { component_name: wrap(pick(NAMES), () => [pick(NAMES), pick(NAMES)]) };
    case 1:
      return { robot_name: rand() < 0.2 ? { $exists: rand() < 0.5 } : wrap(pick(ROBOTS), () => [pick(ROBOTS), null]) };
    case 2:
      return { time_received: wrap(new Date(T0 + int(20) * 1000), () => [new Date(T0 + int(20) * 1000)]) };
    case 3:
      return { tags: rand() < 0.3 ? { $all: [pick(TAGS)] } : rand() < 0.2 ? { $size: int(3) } : wrap(pick(TAGS), () => [pick(TAGS), pick(TAGS)]) };
    case 4:
      return { [pick(['data.readings.v', 'data.readings.w', 'data.nested.deep.v'])]: wrap(pick([int(100), pick(['a', 'b']), true]), () => [int(100), 'a']) };
    case 5:
      return { [pick(['$or', '$nor', '$and'])]: [randomCondition(), randomCondition()] };
    default:
      return { _id: wrap(1 + int(150), () => [1 + int(150), 2]) };
  }
}

function randomStage(): Stage {
  switch (int(11)) {
    case 0:
    case 1:
    case 2:
      return { $match: Object.assign({}, randomCondition(), rand() < 0.4 ? randomCondition() : {}) };
    case 3: {
      const keys = [pick(['component_name', 'robot_name', 'time_received', '_id', 'data.readings.v'])];
      if (rand() < 0.5) keys.push(pick(['time_received', 'robot_name']));
      return { $sort: Object.fromEntries(keys.map((k) => [k, pick([1, -1])])) };
    }
    case 4:
      return { $limit: 1 + int(40) };
    case 5:
      return { $skip: int(30) };
    case 6:
      return rand() < 0.5
        ? {
            $project: Object.fromEntries(
              ['component_name', 'robot_name', 'tags', 'data', 'time_received']
                .filter(() => rand() < 0.5)
                .concat(['component_name'])
                .map((k) => [k, 1]),
            ),
          }
        : { $project: { data: 0, ...(rand() < 0.5 ? { _id: 0 } : {}) } };
    case 7:
      return rand() < 0.5
        ? {
            $group: {
              _id: pick(['$component_name', '$robot_name', null]),
              n: { $sum: 1 },
              v: { $sum: '$data.readings.v' },
              a: { $avg: pick(['$data.readings.w', '$data.nested.deep.v']) },
            },
          }
        : { $group: { _id: '$component_name', top: { $max: '$data.readings.v' }, c: { $count: {} } } };
    case 8:
      return { $unwind: '$tags' };
    case 9:
      return { $addFields: { k: { $concat: [{ $ifNull: ['$robot_name', '-'] }, '!'] } } };
    default:
      return { $count: 'n' };
  }
}

let fx: TabularFixture;
let pool: MingoPool;
let runner: MqlRunner;
let everything: Record<string, unknown>[];

test.before(async () => {
  fx = await createTabularFixture();
  await fx.insert(Array.from({ length: 150 }, randomReading));
  pool = new MingoPool({ threads: 1 });
  runner = new MqlRunner(fx.connect, pool, async () => [], { limits: { timeoutMs: 120_000 } });
  everything = await runner.run('org-d', [{ $match: {} }], { sourceType: 'STANDARD' });
});
test.after.always(async () => {
  await pool.close();
  await fx.close();
});

const canonical = (v: unknown): unknown =>
  v instanceof Date
    ? { $date: v.toISOString() }
    : Array.isArray(v)
      ? v.map(canonical)
      : // Sums may add in another order in DuckDB than in mingo (MongoDB fixes no order either).
        typeof v === 'number' && !Number.isInteger(v)
        ? Number(v.toPrecision(12))
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
            )
          : v;

test('random pipelines: push-down + mingo equals mingo alone', async (t) => {
  t.is(everything.length, everything.filter((d) => d.organization_id === 'org-d').length);
  let pushedStages = 0;
  let groupsInSql = 0;
  for (let i = 0; i < 300; i++) {
    const pipeline = Array.from({ length: 1 + int(4) }, randomStage);
    const expected = aggregate(everything, pipeline, { scriptEnabled: false });
    const actual = await runner.run('org-d', pipeline, { sourceType: 'STANDARD' });
    const plan = planPushdown(pipeline);
    pushedStages += pipeline.length - plan.residual.length;
    if (plan.group) groupsInSql++;
    t.deepEqual(canonical(actual), canonical(expected), JSON.stringify(pipeline));
  }
  t.true(pushedStages > 100, `stages pushed down: ${pushedStages}`);
  t.true(groupsInSql > 5, `$group stages run in SQL: ${groupsInSql}`);
});
