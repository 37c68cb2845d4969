// The cloud stores an upload id once: a repeated upload (a machine re-sending after a crash between the
// cloud's answer and its local delete) is answered with the first upload's ids and stores nothing.
import test from 'ava';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';

let fx: CloudFixture;
test.before(async () => {
  fx = await startFixture();
});
test.after.always(async () => {
  await fx?.close();
});

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:00:01Z');

test('a repeated tabular upload id stores its points once and answers the same file id', async (t) => {
  const part = fx.partClient(fx.machineA1).dataClient;
  const items = [{ readings: { a: 1 } }, { readings: { a: 2 } }];
  const times: [Date, Date][] = [
    [t0, t0],
    [t1, t1],
  ];
  const send = () =>
    part.tabularDataCaptureUpload(items, fx.machineA1.part_id, 'core:component:sensor', 'dedup-tab', 'Readings', times, [], { uploadId: 'file-1' });
  const first = await send();
  const [second, third] = await Promise.all([send(), send()]); // concurrent retries too
  t.is(second, first);
  t.is(third, first);
  const reader = fx.client(fx.keys.ownerA).dataClient;
  t.is((await reader.tabularDataByFilter({ componentName: 'dedup-tab' }, { countOnly: true })).count, 2);
  // Without an upload id nothing is deduplicated; another id is another upload.
  await part.tabularDataCaptureUpload(items, fx.machineA1.part_id, 'core:component:sensor', 'dedup-tab', 'Readings', times);
  await part.tabularDataCaptureUpload(items, fx.machineA1.part_id, 'core:component:sensor', 'dedup-tab', 'Readings', times, [], { uploadId: 'file-2' });
  t.is((await reader.tabularDataByFilter({ componentName: 'dedup-tab' }, { countOnly: true })).count, 6);
});

test('a repeated binary upload id stores one datum, whether sent whole or streamed', async (t) => {
  const part = fx.partClient(fx.machineA1).dataClient;
  const image = Buffer.from('not really a jpeg');
  const first = await part.binaryDataCaptureUpload(image, fx.machineA1.part_id, 'core:component:camera', 'dedup-cam', 'GetImage', '.jpg', [t0, t1], ['x'], {
    uploadId: 'img-1',
  });
  const again = await part.binaryDataCaptureUpload(image, fx.machineA1.part_id, 'core:component:camera', 'dedup-cam', 'GetImage', '.jpg', [t0, t1], ['x'], {
    uploadId: 'img-1',
  });
  const streamed = await part.streamingDataCaptureUpload(image, fx.machineA1.part_id, '.jpg', { componentName: 'dedup-cam', uploadId: 'img-1' });
  t.is(again, first);
  t.is(streamed, first);
  const reader = fx.client(fx.keys.ownerA).dataClient;
  t.is((await reader.binaryDataByFilter({ componentName: 'dedup-cam' }, { countOnly: true })).count, 1);
});

test('the same upload id from two parts is two uploads', async (t) => {
  const a = fx.partClient(fx.machineA1).dataClient;
  const b = fx.partClient(fx.machineA2).dataClient;
  const times: [Date, Date][] = [[t0, t0]];
  const idA = await a.tabularDataCaptureUpload([{ readings: { v: 1 } }], fx.machineA1.part_id, 'core:component:sensor', 'dedup-two', 'Readings', times, [], {
    uploadId: 'same',
  });
  const idB = await b.tabularDataCaptureUpload([{ readings: { v: 1 } }], fx.machineA2.part_id, 'core:component:sensor', 'dedup-two', 'Readings', times, [], {
    uploadId: 'same',
  });
  t.not(idA, idB);
  const reader = fx.client(fx.keys.ownerA).dataClient;
  t.is((await reader.tabularDataByFilter({ componentName: 'dedup-two' }, { countOnly: true })).count, 2);
});

test('an upload id longer than 128 characters is INVALID_ARGUMENT naming the field', async (t) => {
  const part = fx.partClient(fx.machineA1).dataClient;
  const err = await t.throwsAsync(
    part.tabularDataCaptureUpload([{ readings: { v: 1 } }], fx.machineA1.part_id, 'core:component:sensor', 'dedup-long', 'Readings', [[t0, t0]], [], {
      uploadId: 'x'.repeat(129),
    }),
  );
  t.is((err as { code?: number }).code, 3);
  t.regex(err!.message, /upload_id/);
});
