// The direct codec reads and writes exactly the wire format of the generated code.
import test from 'ava';
import { DataCaptureUploadRequest, DataType } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { decodeDataCaptureUploadRequest, encodeDataCaptureUploadRequest } from './struct-codec.js';

const request: DataCaptureUploadRequest = {
  metadata: {
    partId: 'p',
    componentType: 'rdk:component:sensor',
    componentName: 'c',
    methodName: 'Readings',
    type: DataType.DATA_TYPE_TABULAR_SENSOR,
    fileName: '',
    methodParameters: { a: 1 },
    fileExtension: '',
    tags: ['t'],
    datasetIds: [],
    mimeType: '',
    uploadId: '',
  },
  sensorContents: [
    {
      metadata: { timeRequested: new Date(1000), timeReceived: new Date(2000), mimeType: '' },
      struct: { readings: { n: 1.5, s: 'x', b: true, z: null, list: [1, 'two', [3], { four: 4 }], nested: { deep: { er: -2 } } }, empty: {} },
    },
    { metadata: { timeRequested: new Date(3000), timeReceived: new Date(4000), mimeType: '' }, binary: Buffer.from([1, 2, 3]) },
    // Milliseconds, times before 1970, a missing time and a MIME type: the metadata decoder is direct too.
    { metadata: { timeRequested: new Date(-1_234_567), timeReceived: undefined, mimeType: 'image/png' }, struct: { readings: {} } },
    { metadata: { timeRequested: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), timeReceived: new Date(8.64e15), mimeType: '' }, struct: {} },
  ],
};

test('the direct decoder reads what the generated encoder writes, exactly as the generated decoder does', (t) => {
  const generated = Buffer.from(DataCaptureUploadRequest.encode(request).finish());
  t.deepEqual(decodeDataCaptureUploadRequest(generated), DataCaptureUploadRequest.decode(generated));
  t.deepEqual(decodeDataCaptureUploadRequest(generated).sensorContents[0].struct, request.sensorContents[0].struct);
});

test('the direct encoder writes exactly what the generated encoder writes', (t) => {
  const awkward = JSON.parse('{"__proto__": {"x": 1}, "": "empty key", "10": "index", "b": [null, [], {}, true, -0, 1e-300, "é"]}') as Record<string, unknown>;
  const upload: DataCaptureUploadRequest = {
    ...request,
    sensorContents: [
      ...request.sensorContents,
      { metadata: undefined, struct: awkward },
      { metadata: { timeRequested: new Date(5), timeReceived: undefined, mimeType: 'x' }, struct: { skipped: undefined, list: [undefined, 1] } },
      { metadata: undefined, struct: {} },
    ],
  };
  t.deepEqual(encodeDataCaptureUploadRequest(upload), Buffer.from(DataCaptureUploadRequest.encode(upload).finish()));
  const unsupported = { ...request, sensorContents: [{ metadata: undefined, struct: { n: 1n } }] };
  t.throws(() => DataCaptureUploadRequest.encode(unsupported), { message: 'Unsupported any value type: bigint' });
  t.throws(() => encodeDataCaptureUploadRequest(unsupported), { message: 'Unsupported any value type: bigint' });
});

test('a Struct key "__proto__" is kept as data on both sides, and nothing gains a prototype from it (issue 27)', (t) => {
  const readings = JSON.parse('{"__proto__": {"polluted": "yes", "n": 1}, "nested": {"__proto__": [1, 2]}, "a": 1}') as Record<string, unknown>;
  const upload: DataCaptureUploadRequest = { ...request, sensorContents: [{ metadata: undefined, struct: { readings } }] };
  const bytes = encodeDataCaptureUploadRequest(upload);
  t.deepEqual(bytes, Buffer.from(DataCaptureUploadRequest.encode(upload).finish()), 'the generated encoder writes the key too');
  for (const [name, decoded] of [
    ['direct', decodeDataCaptureUploadRequest(bytes)],
    ['generated', DataCaptureUploadRequest.decode(bytes)],
  ] as const) {
    const got = decoded.sensorContents[0].struct!.readings as Record<string, unknown>;
    t.deepEqual(Object.keys(got), ['__proto__', 'nested', 'a'], name);
    t.is(Object.getPrototypeOf(got), Object.prototype, `${name}: the object keeps its own prototype`);
    t.deepEqual(Object.getOwnPropertyDescriptor(got, '__proto__')?.value, { polluted: 'yes', n: 1 }, name);
    t.is((got as { polluted?: unknown }).polluted, undefined, `${name}: nothing is inherited from the data`);
    t.deepEqual(Object.getOwnPropertyDescriptor(got.nested, '__proto__')?.value, [1, 2], name);
    t.is(JSON.stringify(got), '{"__proto__":{"polluted":"yes","n":1},"nested":{"__proto__":[1,2]},"a":1}', name);
  }
  t.is(({} as { polluted?: unknown }).polluted, undefined, 'Object.prototype is untouched');
});

test('a request over the point cap is refused from its framing, before any of its points is decoded (issue 27)', (t) => {
  // Three items; the first holds a Struct that cannot be decoded (wire type 7), the others are empty.
  const bytes = Buffer.from([0x12, 0x03, 0x12, 0x01, 0x0f, 0x12, 0x00, 0x12, 0x00]);
  const capped = t.throws(() => decodeDataCaptureUploadRequest(bytes, { maxPoints: 2, maxValues: 1000 }));
  t.regex(capped.message, /sensor_contents: more than 2 items in one request \(PLATFORM_UPLOAD_MAX_POINTS\)/);
  // Within the cap, the first item is decoded and its error is the decoder's.
  const decoded = t.throws(() => decodeDataCaptureUploadRequest(bytes, { maxPoints: 3, maxValues: 1000 }));
  t.notRegex(decoded.message, /PLATFORM_UPLOAD_MAX_POINTS/);
});
