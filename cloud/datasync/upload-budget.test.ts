// The per-principal byte budget of DataCaptureUpload, and the decoder's caps on their own.
import test from 'ava';
import { DataCaptureUploadRequest } from '../../gen/platform/app/datasync/v1/data_sync.js';
import type { Principal } from '../auth/principal.js';
import { decodeDataCaptureUploadRequest } from './struct-codec.js';
import { ByteBudget, captureUploadLimitsFromEnv, defaultCaptureUploadLimits } from './upload-budget.js';

const part = (partId: string): Principal => ({ kind: 'part', partId, machineId: 'm', locationId: 'l', organizationId: 'o' });

test('a principal over its in-flight bytes is RESOURCE_EXHAUSTED naming the limit; others are not affected; release frees', (t) => {
  const budget = new ByteBudget(100);
  const first = budget.take(part('a'), 60, 'machine part a');
  const err = t.throws(() => budget.take(part('a'), 41, 'machine part a'));
  t.regex(
    err.message,
    /machine part a has 60 bytes of uploads in progress; 41 more would pass the 100-byte limit \(PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL\)/,
  );
  t.notThrows(() => budget.take(part('b'), 100, 'machine part b'));
  const second = budget.take(part('a'), 40, 'machine part a');
  first();
  first();
  t.is(budget.held(part('a')), 40, 'a release counts once');
  second();
  t.is(budget.held(part('a')), 0);
  t.throws(() => budget.take(part('c'), 101, 'machine part c'), { message: /101 more would pass the 100-byte limit/ });
});

test('the limits come from the environment, with defaults, and a bad value names the variable', (t) => {
  t.deepEqual(captureUploadLimitsFromEnv({}), defaultCaptureUploadLimits);
  t.deepEqual(
    captureUploadLimitsFromEnv({ PLATFORM_UPLOAD_MAX_POINTS: '5', PLATFORM_UPLOAD_MAX_VALUES: '6', PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL: '7' }),
    {
      maxPoints: 5,
      maxValues: 6,
      maxInFlightBytesPerPrincipal: 7,
    },
  );
  t.throws(() => captureUploadLimitsFromEnv({ PLATFORM_UPLOAD_MAX_POINTS: '0' }), {
    message: /PLATFORM_UPLOAD_MAX_POINTS must be a whole number of at least 1, got "0"/,
  });
});

test('the decoder stops at the point and value caps, and decodes as before under them', (t) => {
  const request: DataCaptureUploadRequest = {
    metadata: undefined,
    sensorContents: Array.from({ length: 5 }, (_, i) => ({ metadata: undefined, struct: { readings: { v: i, list: [1, 2, null] } }, binary: undefined })),
  };
  const bytes = DataCaptureUploadRequest.encode(request).finish();
  // Per point: the readings field and its value, the v field and its value, list field, its value and 3 items = 9.
  t.deepEqual(decodeDataCaptureUploadRequest(bytes, { maxPoints: 5, maxValues: 45 }), DataCaptureUploadRequest.decode(bytes));
  t.throws(() => decodeDataCaptureUploadRequest(bytes, { maxPoints: 4, maxValues: 1000 }), { message: /sensor_contents: more than 4 items in one request/ });
  t.throws(() => decodeDataCaptureUploadRequest(bytes, { maxPoints: 5, maxValues: 44 }), {
    message: /sensor_contents\[4\]: the request holds more than 44 values/,
  });
  // The count starts afresh for the next request.
  t.notThrows(() => decodeDataCaptureUploadRequest(bytes, { maxPoints: 5, maxValues: 45 }));
  t.notThrows(() => decodeDataCaptureUploadRequest(bytes));
});
