// The pure parts of the cloud page's query, training and machines views: result flattening, column
// picking, chart series, the training curve read back from the job's log, gRPC-Web framing of streams,
// and the refusals of the text fields (each names its field and rule).
import test from 'ava';
import { BSON } from 'bson';
import { TabularDataByFilterResponse } from '../../gen/platform/app/data/v1/data.js';
import { parseConfig } from '../../web/cloud/machines/config-text.js';
import { FrameReader, trailerStatus } from '../../web/shared/grpc-web-client.js';
import { parseStages } from '../../web/cloud/query/mql-stages.js';
import { numericColumns, seriesOf, tableOf, timeColumn, formatCell } from '../../web/cloud/query/rows.js';
import { pageTable } from '../../web/cloud/query/tabular-page.js';
import { axesOf, unitOf } from '../../web/cloud/query/units.js';
import { camerasOf, deployedConfig, packageNameOf } from '../../web/cloud/training/deploy-plan.js';
import { hunksOf, lineDiff } from '../../web/cloud/training/line-diff.js';
import { parseArguments } from '../../web/cloud/training/arguments-text.js';
import { curveOf, pointOfLine } from '../../web/cloud/training/progress-curve.js';

test('documents flatten into dotted columns in first-seen order; BSON numbers stay numbers', (t) => {
  const docs = [
    BSON.deserialize(BSON.serialize({ t: new Date('2026-01-01T00:00:00Z'), data: { readings: { temp: 21.5, ok: true } }, n: BSON.Long.fromNumber(3) })),
    { t: new Date('2026-01-01T00:01:00Z'), data: { readings: { temp: 22, humidity: 40 } }, tags: ['a', 'b'], empty: {} },
  ];
  const table = tableOf(docs);
  t.deepEqual(table.columns, ['t', 'data.readings.temp', 'data.readings.ok', 'n', 'data.readings.humidity', 'tags', 'empty']);
  t.is(table.rows[0]['n'], 3);
  t.is(table.rows[1]['tags'], '["a","b"]');
  t.is(table.rows[1]['empty'], '{}');
  t.deepEqual(numericColumns(table), ['data.readings.temp', 'n', 'data.readings.humidity']);
  t.is(timeColumn(table), 't');
  t.is(formatCell(table.rows[0]['t']), '2026-01-01T00:00:00.000Z');
  t.is(formatCell(table.rows[1]['n']), '');
});

test('a column with any non-number is not numeric; ISO text counts as time; without a time column x is the row number', (t) => {
  const table = tableOf([
    { when: '2026-03-01 10:00:00', v: 1, mixed: 1, name: 'a' },
    { when: '2026-03-01 10:00:05', v: 2, mixed: 'x', name: 'b' },
  ]);
  t.deepEqual(numericColumns(table), ['v']);
  t.is(timeColumn(table), 'when');
  t.deepEqual(seriesOf(table, ['v'], 'when')[0].points, [
    [Date.parse('2026-03-01 10:00:00'), 1],
    [Date.parse('2026-03-01 10:00:05'), 2],
  ]);
  const noTime = tableOf([{ v: 5 }, { v: null }, { v: 7 }]);
  t.is(timeColumn(noTime), undefined);
  t.deepEqual(seriesOf(noTime, ['v'], undefined)[0].points, [
    [0, 5],
    [2, 7],
  ]);
});

test('a TabularDataByFilter page becomes rows with time, source and payload columns', (t) => {
  const reply = TabularDataByFilterResponse.fromPartial({
    metadata: [{ componentName: 'thermo', componentType: 'sensor', robotName: 'rover' }],
    data: [
      { data: { readings: { temp: 20 } }, metadataIndex: 0, timeReceived: new Date('2026-01-01T00:00:00Z') },
      { data: { readings: { temp: 21 } }, metadataIndex: 0, timeReceived: new Date('2026-01-01T00:00:10Z') },
    ],
  });
  const table = pageTable(reply);
  t.deepEqual(table.columns, ['time_received', 'component_name', 'component_type', 'robot_name', 'readings.temp']);
  t.like(table.rows[1], { component_name: 'thermo', robot_name: 'rover', 'readings.temp': 21 });
  t.is(timeColumn(table), 'time_received');
  t.deepEqual(numericColumns(table), ['readings.temp']);
});

test('the training curve is read from the log lines and ends with the latest progress', (t) => {
  const line = (message: string) => ({ level: 'info', time: new Date(), message });
  t.deepEqual(pointOfLine('epoch 2/5: loss 0.4123, validation accuracy 0.8500, 120 images/s'), {
    epoch: 2,
    totalEpochs: 5,
    loss: 0.4123,
    metricName: 'accuracy',
    metric: 0.85,
  });
  t.is(pointOfLine('exporting the dataset'), undefined);
  const logs = [
    line('exporting'),
    line('epoch 1/3: loss 1.0000, validation map50 0.1000, 50 images/s'),
    line('epoch 2/3: loss 0.5000, validation map50 0.3000, 50 images/s'),
  ];
  const latestSame = { epoch: 2, totalEpochs: 3, loss: 0.5, validationMetricName: 'map50', validationMetric: 0.3, imagesPerSecond: 50 };
  t.deepEqual(
    curveOf(logs, latestSame).map((p) => p.loss),
    [1, 0.5],
  );
  const latestNewer = { ...latestSame, epoch: 3, loss: 0.25, validationMetric: 0.6 };
  t.deepEqual(
    curveOf(logs, latestNewer).map((p) => [p.epoch, p.loss, p.metric]),
    [
      [1, 1, 0.1],
      [2, 0.5, 0.3],
      [3, 0.25, 0.6],
    ],
  );
  t.deepEqual(curveOf([], undefined), []);
});

test('gRPC-Web frames split across reads are put back together; the trailer gives status and message', (t) => {
  const frame = (flag: number, payload: Uint8Array) => {
    const out = new Uint8Array(5 + payload.length);
    out[0] = flag;
    new DataView(out.buffer).setUint32(1, payload.length);
    out.set(payload, 5);
    return out;
  };
  const bytes = new Uint8Array([
    ...frame(0, new Uint8Array([1, 2, 3])),
    ...frame(0, new Uint8Array(300).fill(7)),
    ...frame(0x80, new TextEncoder().encode('grpc-status: 5\r\ngrpc-message: model%20v1%20not%20found\r\n')),
  ]);
  const reader = new FrameReader();
  const frames = [];
  for (let at = 0; at < bytes.length; at += 7) frames.push(...reader.push(bytes.subarray(at, at + 7)));
  t.deepEqual(
    frames.map((f) => [f.flag, f.payload.length]),
    [
      [0, 3],
      [0, 300],
      [0x80, 56],
    ],
  );
  t.deepEqual(trailerStatus(frames[2].payload), { code: 5, detail: 'model v1 not found' });
});

test('text fields refuse bad input naming the field and the rule', (t) => {
  t.deepEqual(parseStages('[{"$match": {"a": 1}}, {"$limit": 2}]'), [{ $match: { a: 1 } }, { $limit: 2 }]);
  t.throws(() => parseStages('{"$match": {}}'), { message: /^query: must be a JSON array of stages/ });
  t.throws(() => parseStages('[1]'), { message: /^query: must be a JSON array of stages/ });
  t.throws(() => parseStages('[{'), { message: /^query: not JSON/ });
  t.deepEqual(parseArguments('epochs=3\nbatch_size = 8, seed=2'), { epochs: '3', batch_size: '8', seed: '2' });
  t.deepEqual(parseArguments(''), {});
  t.throws(() => parseArguments('epochs'), { message: 'arguments: "epochs" must have the form key=value' });
  t.deepEqual(parseConfig('{"components": []}'), { components: [] });
  t.throws(() => parseConfig('[]'), { message: 'robot_config: must be a JSON object' });
  t.throws(() => parseConfig('{'), { message: /^robot_config: not JSON/ });
});

test('a chart groups its series by unit: a unit in the name, else the reading’s own name', (t) => {
  t.deepEqual(unitOf('data.readings.temperature_c'), { key: 'unit:°C', label: '°C' });
  t.deepEqual(unitOf('readings.humidity_pct'), { key: 'unit:%', label: '%' });
  t.deepEqual(unitOf('readings.pressure (hPa)'), { key: 'unit:hPa', label: 'hPa' });
  t.deepEqual(unitOf('t[C]'), { key: 'unit:C', label: 'C' });
  t.deepEqual(unitOf('readings.temperature'), { key: 'name:temperature', label: 'temperature' });
  // An unknown suffix is part of the name, not a unit.
  t.deepEqual(unitOf('readings.left_wheel'), { key: 'name:left_wheel', label: 'left_wheel' });
  const s = (column: string) => ({ column, points: [] as [number, number][] });
  const axes = axesOf([s('a.temperature'), s('a.humidity'), s('b.temperature'), s('x_c'), s('y_degc')]);
  t.deepEqual(
    axes.map((a) => [a.unit.label, a.series.map((x) => x.column)]),
    [
      ['temperature', ['a.temperature', 'b.temperature']],
      ['humidity', ['a.humidity']],
      ['°C', ['x_c', 'y_degc']],
    ],
  );
});

test('deploying a model adds its package, an onnx_cpu service and an mlmodel vision service, keeping the rest', (t) => {
  const request = {
    orgId: 'o1',
    modelName: 'My shapes!',
    modelVersion: 'v2',
    files: ['model.onnx', 'labels.txt'],
    name: packageNameOf('My shapes!'),
    cameraName: 'cam',
  };
  t.is(request.name, 'My-shapes');
  const before = {
    components: [{ name: 'cam', api: 'core:component:camera', model: 'fake' }],
    services: [{ name: 'other', api: 'core:service:vision', model: 'obstacles_depth' }],
  };
  const after = deployedConfig(before, request);
  t.deepEqual(after, {
    components: before.components,
    packages: [{ name: 'My-shapes', package: 'o1/My shapes!', version: 'v2', type: 'ml_model' }],
    services: [
      before.services[0],
      {
        name: 'My-shapes-model',
        api: 'core:service:mlmodel',
        model: 'onnx_cpu',
        attributes: { model_path: '${packages.My-shapes}/model.onnx', label_path: '${packages.My-shapes}/labels.txt' },
      },
      { name: 'My-shapes', api: 'core:service:vision', model: 'mlmodel', attributes: { mlmodel_name: 'My-shapes-model', camera_name: 'cam' } },
    ],
  });
  t.deepEqual(camerasOf(before), ['cam']);
  // A newer version replaces the entries in place; deploying the same one again changes nothing.
  const v3 = deployedConfig(after, { ...request, modelVersion: 'v3' });
  t.is((v3.packages as { version: string }[])[0].version, 'v3');
  t.is((v3.services as unknown[]).length, 3);
  t.deepEqual(deployedConfig(after, request), after);
  // Refusals name the field.
  t.throws(() => deployedConfig(before, { ...request, name: 'other' }), { message: /^name: services\[0\] is already called "other" and is something else/ });
  t.throws(() => deployedConfig(before, { ...request, name: 'a b' }), { message: /^name "a b": must be 1-64 of/ });
  t.throws(() => deployedConfig(before, { ...request, files: ['model.tflite'] }), { message: /has no model\.onnx \(files: model\.tflite\)/ });
  t.throws(() => deployedConfig({ services: {} }, request), { message: 'robot_config.services: must be a list to deploy into' });
  t.false('label_path' in (deployedConfig({}, { ...request, files: ['model.onnx'] }).services as { attributes: object }[])[0].attributes);
});

test('the config diff shows the changed lines with three lines of context, numbered from 1', (t) => {
  const keys = 'abcdefghijklmn'.split('');
  const before = ['{', ...keys.map((k, n) => `  "${k}": ${n + 1}${n === keys.length - 1 ? '' : ','}`), '}'].join('\n');
  const after = before.replace('"b": 2,', '"b": 20,').replace('"n": 14', '"n": 14,\n  "o": 15');
  const lines = lineDiff(before, after);
  t.deepEqual(
    lines.filter((l) => l.kind !== ' '),
    [
      { kind: '-', text: '  "b": 2,' },
      { kind: '+', text: '  "b": 20,' },
      { kind: '-', text: '  "n": 14' },
      { kind: '+', text: '  "n": 14,' },
      { kind: '+', text: '  "o": 15' },
    ],
  );
  const hunks = hunksOf(lines);
  t.is(hunks.length, 2);
  t.deepEqual([hunks[0].oldStart, hunks[0].newStart], [1, 1]);
  t.deepEqual(
    hunks[0].lines.map((l) => l.kind + l.text),
    [' {', '   "a": 1,', '-  "b": 2,', '+  "b": 20,', '   "c": 3,', '   "d": 4,', '   "e": 5,'],
  );
  // The second hunk starts three lines before its change ("n" is line 15).
  t.deepEqual([hunks[1].oldStart, hunks[1].newStart], [12, 12]);
  t.is(hunks[1].lines.length, 3 + 3 + 1);
  t.deepEqual(hunks[1].lines.at(-1), { kind: ' ', text: '}' });
  t.deepEqual(hunksOf(lineDiff(before, before)), []);
});
