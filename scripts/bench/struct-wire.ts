// npm run bench:struct-wire — the shared Struct wire codec (plugins/formats/struct-wire/) where each side
// uses it, in this process, against the generated ts-proto code as the anchor:
//
//   record     the machine's framed tabular record (framedTabularRecord) per capture, vs.
//              frame(SensorData.encode(...).finish());
//   decode     the cloud's DataCaptureUploadRequest decode of BATCH points, vs. the generated decoder;
//   encode     the TypeScript client's request encoder for the same request, vs. the generated encoder.
//
// Each figure is the best of ROUNDS rounds of at least 300 ms (the machine is shared; the best round is
// the least disturbed). BENCH_BATCH (1000) and BENCH_ROUNDS (5) change the sizes.
import { loadavg } from 'node:os';
import { frame } from '../../core/datamanager/capture-file.js';
import { framedTabularRecord } from '../../core/datamanager/tabular-record.js';
import { decodeDataCaptureUploadRequest, encodeDataCaptureUploadRequest } from '../../cloud/datasync/struct-codec.js';
import { DataCaptureUploadRequest, DataType, SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';

const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** A typical sensor reading: a few numbers, a string, a nested object and a short list. */
const reading = (i: number) => ({
  readings: {
    temperature_c: 21.5 + i / 1000,
    humidity_pct: 40.2,
    status: 'ok',
    position: { x: i, y: -i, z: 0.5 },
    samples: [1, 2, 3, i],
  },
});

/** Operations per second: the best of ROUNDS rounds. */
function rate(op: () => void): number {
  let best = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let n = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < 300) {
      for (let i = 0; i < 100; i++) op();
      n += 100;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    best = Math.max(best, (n * 1000) / elapsed);
  }
  return best;
}

const request: DataCaptureUploadRequest = {
  metadata: {
    partId: 'p',
    componentType: 'rdk:component:sensor',
    componentName: 'c',
    methodName: 'Readings',
    type: DataType.DATA_TYPE_TABULAR_SENSOR,
    fileName: '',
    methodParameters: undefined,
    fileExtension: '',
    tags: [],
    datasetIds: [],
    mimeType: '',
    uploadId: '',
  },
  sensorContents: Array.from({ length: BATCH }, (_, i) => ({
    metadata: { timeRequested: new Date(1_764_000_000_000 + i), timeReceived: new Date(1_764_000_000_001 + i), mimeType: '' },
    struct: reading(i),
  })),
};
const body = Buffer.from(DataCaptureUploadRequest.encode(request).finish());

let sink = 0;
const data = reading(7);
const rows: [string, number, number, string][] = [
  [
    'record (captures/s)',
    rate(() => (sink += framedTabularRecord(1_764_000_000_000, 1_764_000_000_003, data).byteLength)),
    rate(() => {
      const bytes = SensorData.encode({
        metadata: { timeRequested: new Date(1_764_000_000_000), timeReceived: new Date(1_764_000_000_003), mimeType: '' },
        struct: data,
      }).finish();
      sink += frame(bytes).byteLength;
    }),
    'captures',
  ],
  [
    `decode (points/s, ${BATCH} a request)`,
    rate(() => (sink += decodeDataCaptureUploadRequest(body).sensorContents.length)) * BATCH,
    rate(() => (sink += DataCaptureUploadRequest.decode(body).sensorContents.length)) * BATCH,
    'points',
  ],
  [
    `encode (points/s, ${BATCH} a request)`,
    rate(() => (sink += encodeDataCaptureUploadRequest(request).byteLength)) * BATCH,
    rate(() => (sink += DataCaptureUploadRequest.encode(request).finish().byteLength)) * BATCH,
    'points',
  ],
];

console.log(`struct-wire codec, best of ${ROUNDS} rounds, load average ${loadavg()[0].toFixed(2)} (checksum ${sink % 7})`);
console.log('| measure | shared codec | generated (anchor) | ratio |');
console.log('|---|---|---|---|');
for (const [name, ours, anchor] of rows)
  console.log(`| ${name} | ${Math.round(ours).toLocaleString('en')} | ${Math.round(anchor).toLocaleString('en')} | ${(ours / anchor).toFixed(2)} |`);
