// The hand-written tabular record encoder writes exactly the bytes of the generated SensorData encoder
// (framed as capture-file.ts frames records), so that capture files and uploads stay what they were.
import test from 'ava';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { frame } from './capture-file.js';
import { framedTabularRecord } from './tabular-record.js';

const generated = (requested: number, received: number, data: Record<string, unknown>) =>
  frame(SensorData.encode({ metadata: { timeRequested: new Date(requested), timeReceived: new Date(received), mimeType: '' }, struct: data }).finish());

const cases: [string, Record<string, unknown>][] = [
  ['sensor readings', { readings: { temperature_c: 21.5, humidity_pct: 40.2, pressure_hpa: 1013.2 } }],
  ['an empty struct', {}],
  ['scalars of every kind', { readings: { n: -0.5, zero: 0, big: 1e300, t: true, f: false, none: null, s: 'text', empty: '' } }],
  ['unicode keys and strings', { readings: { température: 'été ☀️', 日本: '語' } }],
  [
    'nested structs and lists',
    { analogs: { a: { value: 3, min_range: 0, max_range: 3.3, step_size: 0.001 } }, list: [1, 'two', [3, [4]], { five: 5 }, null, true] },
  ],
  ['undefined keys are left out, undefined list items are empty values', { readings: { gone: undefined, kept: 1, list: [undefined, 2] } }],
  ['an empty key', { readings: { '': 7 } }],
  ['a long string (two-byte lengths)', { readings: { s: 'x'.repeat(300), list: Array.from({ length: 40 }, (_, i) => i) } }],
];

for (const [name, data] of cases) {
  test(`same bytes as the generated encoder: ${name}`, (t) => {
    t.deepEqual(framedTabularRecord(1_764_000_123_456, 1_764_000_123_459, data), generated(1_764_000_123_456, 1_764_000_123_459, data));
  });
}

test('times on a whole second (no nanos) and at the epoch (no seconds) are encoded as the generated encoder does', (t) => {
  const data = { readings: { a: 1 } };
  t.deepEqual(framedTabularRecord(1_764_000_123_000, 1_764_000_124_000, data), generated(1_764_000_123_000, 1_764_000_124_000, data));
  t.deepEqual(framedTabularRecord(0, 999, data), generated(0, 999, data));
});

test('a value the Struct cannot hold is an error naming its type and where it is', (t) => {
  t.throws(() => framedTabularRecord(1, 2, { readings: { n: 10n } }), { message: 'unsupported value type in a tabular capture: bigint at readings.n' });
});
