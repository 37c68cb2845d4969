import test from 'ava';
import { status } from '@grpc/grpc-js';
import { MqlRunner } from './mql-runner.js';
import { MingoPool } from './mingo-pool.js';
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { StatusError } from '../../../core/serving/status-error.js';

let fx: TabularFixture;
let pool: MingoPool;
let runner: MqlRunner;
const now = new Date('2026-06-01T12:00:00Z');
const sinks = new Map<string, Record<string, unknown>[]>([['org-a/pipe-1', [{ _id: 'comp', total: 3 }]]]);

test.before(async () => {
  fx = await createTabularFixture();
  await fx.insert([
    {
      organization_id: 'org-a',
      component_name: 'thermo',
      time_received: new Date(now.getTime() - 3 * 24 * 3600_000),
      tags: ['old'],
      data: { readings: { temperature: 10 }, location: { type: 'Point', coordinates: [13.4, 52.5] } },
    },
    {
      organization_id: 'org-a',
      component_name: 'thermo',
      time_received: new Date(now.getTime() - 3600_000),
      data: { readings: { temperature: 20 }, location: { type: 'Point', coordinates: [2.35, 48.85] } },
    },
    { organization_id: 'org-a', component_name: 'hygro', time_received: new Date(now.getTime() - 60_000), data: { readings: { humidity: 50 } } },
    { organization_id: 'org-a', component_name: 'secret', internal: true, time_received: new Date(now.getTime() - 60_000), data: { readings: {} } },
    { organization_id: 'org-b', component_name: 'thermo', time_received: new Date(now.getTime() - 60_000), data: { readings: { temperature: 99 } } },
  ]);
  pool = new MingoPool({ threads: 1 });
  runner = new MqlRunner(
    fx.connect,
    pool,
    async (org, id) => {
      const docs = sinks.get(`${org}/${id}`);
      if (!docs) throw new StatusError(status.NOT_FOUND, `pipeline_id: no pipeline ${id} in organization ${org}`);
      return docs;
    },
    { now: () => now, limits: { timeoutMs: 120_000 } },
  ); // a loaded machine must not turn these into timeouts
});
test.after.always(async () => {
  await pool.close();
  await fx.close();
});

const STANDARD = { sourceType: 'STANDARD' as const };

test('documents carry the reading fields and only the caller organisation, never internal data', async (t) => {
  const docs = await runner.run('org-a', [{ $match: {} }], STANDARD);
  t.deepEqual(
    docs.map((d) => d.component_name),
    ['thermo', 'thermo', 'hygro'],
  );
  t.deepEqual(Object.keys(docs[0]), [
    '_id',
    'organization_id',
    'location_id',
    'robot_id',
    'robot_name',
    'part_id',
    'part_name',
    'component_type',
    'component_name',
    'method_name',
    'time_requested',
    'time_received',
    'time_synced',
    'tags',
    'additional_parameters',
    'data',
  ]);
  t.true(docs[0].time_received instanceof Date);
  t.deepEqual(await runner.run('org-a', [{ $match: { organization_id: 'org-b' } }], STANDARD), []);
});

test('MongoDB semantics: $match on nested data, $group, $sort', async (t) => {
  const docs = await runner.run(
    'org-a',
    [
      { $match: { 'data.readings.temperature': { $gte: 15 } } },
      { $group: { _id: '$component_name', avg: { $avg: '$data.readings.temperature' }, n: { $sum: 1 } } },
    ],
    STANDARD,
  );
  t.deepEqual(docs, [{ _id: 'thermo', avg: 20, n: 1 }]);
  const counts = await runner.run('org-a', [{ $sortByCount: '$component_name' }], STANDARD);
  t.deepEqual(counts, [
    { _id: 'thermo', count: 2 },
    { _id: 'hygro', count: 1 },
  ]);
});

test('HOT_STORAGE serves only recent data', async (t) => {
  const docs = await runner.run('org-a', [{ $project: { component_name: 1, _id: 0 } }], { sourceType: 'HOT_STORAGE' });
  t.deepEqual(docs, [{ component_name: 'thermo' }, { component_name: 'hygro' }]);
});

test('PIPELINE_SINK reads the sink and needs pipeline_id', async (t) => {
  t.deepEqual(await runner.run('org-a', [{ $match: {} }], { sourceType: 'PIPELINE_SINK', pipelineId: 'pipe-1' }), [{ _id: 'comp', total: 3 }]);
  const missing = await t.throwsAsync(runner.run('org-a', [{ $match: {} }], { sourceType: 'PIPELINE_SINK' }), { instanceOf: StatusError });
  t.is(missing!.code, status.INVALID_ARGUMENT);
  t.regex(missing!.message, /pipeline_id: is required/);
  const other = await t.throwsAsync(runner.run('org-b', [{ $match: {} }], { sourceType: 'PIPELINE_SINK', pipelineId: 'pipe-1' }), { instanceOf: StatusError });
  t.is(other!.code, status.NOT_FOUND);
});

test('stages outside the allow-list are refused by name', async (t) => {
  for (const stage of ['$lookup', '$out', '$merge', '$facet', '$unionWith', '$graphLookup', '$collStats', '$indexStats']) {
    const err = await t.throwsAsync(runner.run('org-a', [{ [stage]: {} }], STANDARD), { instanceOf: StatusError });
    t.is(err!.code, status.INVALID_ARGUMENT);
    t.regex(err!.message, new RegExp(`query\\[0\\]: stage \\${stage} is not allowed`));
  }
});

test('code and other collections are refused at any depth', async (t) => {
  for (const stages of [
    [{ $match: { $where: 'sleep(100000)' } }],
    [{ $addFields: { x: { $function: { body: 'function() { return 1 }', args: [], lang: 'js' } } } }],
    [{ $group: { _id: null, x: { $accumulator: { init: 'function() {}' } } } }],
    [{ $match: {} }, { $set: { x: { $lookup: { from: 'tabular_data' } } } }],
  ]) {
    const err = await t.throwsAsync(runner.run('org-a', stages, STANDARD), { instanceOf: StatusError });
    t.is(err!.code, status.PERMISSION_DENIED);
    t.regex(err!.message, /not allowed/);
  }
});

test('malformed pipelines are INVALID_ARGUMENT naming the stage', async (t) => {
  for (const [stages, re] of [
    [[], /query: must be a non-empty list/],
    [['$match'], /query\[0\]: a stage must be a document/],
    [[{ $match: {}, $limit: 1 }], /query\[0\]: a stage must have exactly one field/],
    [[{ $limit: -1 }], /query\[0\]\.\$limit: must be a positive integer/],
    [[{ $match: {} }, { $geoNear: {} }], /query\[1\]: \$geoNear is only valid as the first stage/],
    [[{ $group: { total: { $sum: 1 } } }], /query: .*_id/i],
  ] as [unknown, RegExp][]) {
    const err = await t.throwsAsync(runner.run('org-a', stages, STANDARD), { instanceOf: StatusError });
    t.is(err!.code, status.INVALID_ARGUMENT, String(re));
    t.regex(err!.message, re);
  }
});

test('$geoNear sorts by distance in metres and adds the distance field', async (t) => {
  const docs = await runner.run(
    'org-a',
    [
      { $geoNear: { near: { type: 'Point', coordinates: [2.29, 48.86] }, key: 'data.location', distanceField: 'dist', maxDistance: 2_000_000 } },
      { $project: { _id: 0, component_name: 1, dist: 1 } },
    ],
    STANDARD,
  );
  t.is(docs.length, 2);
  t.true((docs[0].dist as number) < 10_000);
  t.true((docs[1].dist as number) > 800_000 && (docs[1].dist as number) < 900_000);
  const near = await runner.run(
    'org-a',
    [{ $geoNear: { near: { type: 'Point', coordinates: [2.29, 48.86] }, key: 'data.location', distanceField: 'd', maxDistance: 10_000 } }],
    STANDARD,
  );
  t.is(near.length, 1);
});

test('a runaway residual stage is stopped by the timeout', async (t) => {
  // Its own pool: stopping the runaway kills that pool's child, which the other tests need not wait to replace.
  const own = new MingoPool({ processes: 1 });
  t.teardown(() => own.close());
  const quick = new MqlRunner(fx.connect, own, async () => [], { limits: { timeoutMs: 300 } });
  const err = await t.throwsAsync(
    quick.run(
      'org-a',
      [
        { $project: { v: { $reduce: { input: { $range: [0, 1_000_000] }, initialValue: 0, in: { $add: ['$$value', { $size: { $range: [0, 1000] } }] } } } } },
        { $count: 'n' },
      ],
      STANDARD,
    ),
    { instanceOf: StatusError },
  );
  t.is(err!.code, status.DEADLINE_EXCEEDED);
  t.regex(err!.message, /300 ms time limit/);
  const patient = new MqlRunner(fx.connect, own, async () => [], { limits: { timeoutMs: 120_000 } });
  t.deepEqual(await patient.run('org-a', [{ $limit: 1 }, { $count: 'n' }], STANDARD), [{ n: 1 }], 'the pool still works afterwards');
});

test('result limits apply to the final documents', async (t) => {
  const small = new MqlRunner(fx.connect, pool, async () => [], { limits: { maxRows: 2, timeoutMs: 120_000 } });
  t.deepEqual(await small.run('org-a', [{ $count: 'n' }], STANDARD), [{ n: 3 }]);
  const err = await t.throwsAsync(small.run('org-a', [{ $match: {} }], STANDARD), { instanceOf: StatusError });
  t.regex(err!.message, /2-document limit/);
});

test('$group in SQL: $sum of nothing is 0, $avg of nothing is null, groups in first-seen order, none for no input', async (t) => {
  const docs = await runner.run(
    'org-a',
    [{ $group: { _id: '$component_name', s: { $sum: '$data.readings.nothing' }, a: { $avg: '$data.readings.nothing' }, n: { $sum: 2 } } }],
    STANDARD,
  );
  t.deepEqual(docs, [
    { _id: 'thermo', s: 0, a: null, n: 4 },
    { _id: 'hygro', s: 0, a: null, n: 2 },
  ]);
  t.deepEqual(await runner.run('org-a', [{ $match: { component_name: 'none' } }, { $group: { _id: null, n: { $sum: 1 } } }], STANDARD), []);
});

test('a pipeline that would read too many readings into memory is refused', async (t) => {
  const small = new MqlRunner(fx.connect, pool, async () => [], { maxScanRows: 2, limits: { timeoutMs: 120_000 } });
  const err = await t.throwsAsync(small.run('org-a', [{ $addFields: { x: 1 } }], STANDARD), { instanceOf: StatusError });
  t.is(err!.code, status.INVALID_ARGUMENT);
  t.regex(err!.message, /more than 2 documents; add a selective \$match/);
  t.deepEqual(await small.run('org-a', [{ $match: { component_name: 'hygro' } }, { $addFields: { x: 1 } }, { $project: { x: 1, _id: 0 } }], STANDARD), [
    { x: 1 },
  ]);
});

test('operators that would allocate without limit are refused before anything runs, naming the bound', async (t) => {
  const cases: [Record<string, unknown>[], RegExp][] = [
    [[{ $sample: { size: 1e9 } }, { $count: 'n' }], /query\[0\]\.\$sample\.size: must be an integer from 0 to 100000/],
    [
      [{ $limit: 1 }, { $project: { r: { $range: [0, 2_000_000_000] } } }],
      /query\[1\]\.\$project\.r\.\$range: \$range would produce 2000000000 elements; the limit is 1000000/,
    ],
    [[{ $densify: { field: 'v', range: { step: 1, bounds: [0, 1e12] } } }], /would produce more than 1000000 values/],
    [[{ $bucketAuto: { groupBy: '$x', buckets: 1e9 } }], /at most 1000000 buckets/],
  ];
  for (const [stages, message] of cases) {
    const err = await t.throwsAsync(runner.run('org-a', stages, STANDARD), { instanceOf: StatusError });
    t.is(err!.code, status.INVALID_ARGUMENT);
    t.regex(err!.message, message);
  }
});

test('an evaluation that exhausts its heap ends only its child process: RESOURCE_EXHAUSTED naming the cap, and the next query answers', async (t) => {
  const small = new MingoPool({ processes: 1, maxHeapMb: 64 });
  try {
    const capped = new MqlRunner(fx.connect, small, async () => [], { limits: { timeoutMs: 120_000 } });
    // 2^25 references to one string in one array (128 MiB of pointers, twice the cap): only the run time
    // shows its size. (With 2^23, about 32 MiB, the evaluation sometimes fit the 64 MiB heap.)
    const err = await t.throwsAsync(
      capped.run(
        'org-a',
        [
          { $limit: 1 },
          {
            $project: {
              big: {
                $reduce: {
                  input: { $range: [0, 24] },
                  initialValue: [
                    'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
                  ],
                  in: { $concatArrays: ['$$value', '$$value', ['y']] },
                },
              },
            },
          },
          { $project: { n: { $size: '$big' } } },
        ],
        STANDARD,
      ),
      { instanceOf: StatusError },
    );
    t.is(err!.code, status.RESOURCE_EXHAUSTED);
    t.regex(err!.message, /heap cap 64 MiB/);
    t.deepEqual(await capped.run('org-a', [{ $count: 'n' }], STANDARD), [{ n: 3 }]);
  } finally {
    await small.close();
  }
});

test('$setWindowFields works (mingo implements it with an internal $function)', async (t) => {
  const docs = await runner.run(
    'org-a',
    [
      { $match: { component_name: 'thermo' } },
      { $setWindowFields: { sortBy: { time_received: 1 }, output: { n: { $documentNumber: {} } } } },
      { $project: { _id: 0, n: 1 } },
    ],
    STANDARD,
  );
  t.deepEqual(docs, [{ n: 1 }, { n: 2 }]);
});
