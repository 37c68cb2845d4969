// A tabular capture file becomes DataCaptureUpload requests within the request limits, each with its own
// upload id; a file within them stays one request under the file's own id (issue 27, finding 5: the cloud
// caps points per request, and a file refused whole would block a machine's sync for good).
import test from 'ava';
import { DataCaptureUploadRequest, SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { CaptureFileHeader } from './capture-file.js';
import { MAX_POINT_BYTES_PER_REQUEST, MAX_POINTS_PER_REQUEST, uploadRequests } from './upload-body.js';

const header: CaptureFileHeader = {
  upload_id: 'file-1',
  component_type: 'rdk:component:sensor',
  component_name: 'thermo',
  method_name: 'Readings',
  method_parameters: {},
  tags: [],
  kind: 'tabular',
};

const record = (v: number, pad = 0) =>
  Buffer.from(SensorData.encode({ metadata: undefined, struct: { readings: { v, pad: 'x'.repeat(pad) } }, binary: undefined }).finish());

test('a file within the limits is one request under its own upload id', (t) => {
  const requests = uploadRequests(header, [record(1), record(2)], 'part', []);
  t.is(requests.length, 1);
  t.is(requests[0].uploadId, 'file-1');
  t.is(requests[0].items, 2);
  t.is(DataCaptureUploadRequest.decode(requests[0].body).metadata?.uploadId, 'file-1');
});

test('a file past the point limit is split in order, every point sent once, ids <upload id>/<n>', (t) => {
  const count = MAX_POINTS_PER_REQUEST * 2 + 7;
  const requests = uploadRequests(
    header,
    Array.from({ length: count }, (_, i) => record(i)),
    'part',
    [],
  );
  t.deepEqual(
    requests.map((r) => [r.uploadId, r.items]),
    [
      ['file-1', MAX_POINTS_PER_REQUEST],
      ['file-1/1', MAX_POINTS_PER_REQUEST],
      ['file-1/2', 7],
    ],
  );
  const values = requests.flatMap((r) => DataCaptureUploadRequest.decode(r.body).sensorContents.map((s) => (s.struct!.readings as { v: number }).v));
  t.deepEqual(
    values,
    Array.from({ length: count }, (_, i) => i),
  );
  t.is(DataCaptureUploadRequest.decode(requests[2].body).metadata?.uploadId, 'file-1/2');
});

test('a file past the byte limit is split too; a single record larger than it still goes, alone', (t) => {
  const big = record(0, MAX_POINT_BYTES_PER_REQUEST / 4);
  const requests = uploadRequests(header, [big, big, big, big, big, record(9, MAX_POINT_BYTES_PER_REQUEST + 10)], 'part', []);
  t.deepEqual(
    requests.map((r) => r.items),
    [3, 2, 1],
  );
  t.true(requests.every((r, i) => i === requests.length - 1 || r.body.length <= MAX_POINT_BYTES_PER_REQUEST + 1024));
});
