// The direct codec reads and writes exactly the wire format of the generated code.
import test from 'ava';
import { DataCaptureUploadRequest, DataType } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { decodeDataCaptureUploadRequest } from './struct-codec.js';

const request: DataCaptureUploadRequest = {
  metadata: {
    partId: 'p', componentType: 'rdk:component:sensor', componentName: 'c', methodName: 'Readings', type: DataType.DATA_TYPE_TABULAR_SENSOR,
    fileName: '', methodParameters: { a: 1 }, fileExtension: '', tags: ['t'], datasetIds: [], mimeType: '',
  },
  sensorContents: [
    {
      metadata: { timeRequested: new Date(1000), timeReceived: new Date(2000), mimeType: '' },
      struct: { readings: { n: 1.5, s: 'x', b: true, z: null, list: [1, 'two', [3], { four: 4 }], nested: { deep: { er: -2 } } }, empty: {} },
    },
    { metadata: { timeRequested: new Date(3000), timeReceived: new Date(4000), mimeType: '' }, binary: Buffer.from([1, 2, 3]) },
  ],
};

test('the direct decoder reads what the generated encoder writes, exactly as the generated decoder does', (t) => {
  const generated = Buffer.from(DataCaptureUploadRequest.encode(request).finish());
  t.deepEqual(decodeDataCaptureUploadRequest(generated), DataCaptureUploadRequest.decode(generated));
  t.deepEqual(decodeDataCaptureUploadRequest(generated).sensorContents[0].struct, request.sensorContents[0].struct);
});
