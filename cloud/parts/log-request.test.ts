// decodeLogRequest: the generated decoder's result, a slice of entries per turn of the event loop.
import test from 'ava';
import { LogRequest } from '../../gen/platform/app/v1/robot_part.js';
import { decodeLogRequest } from './log-request.js';

const request = (n: number): LogRequest => ({
  id: 'part-1',
  logs: Array.from({ length: n }, (_, i) => ({
    time: new Date(1_790_000_000_000 + i),
    level: i % 2 ? 'info' : 'error',
    loggerName: 'flood',
    message: `${i} ${'x'.repeat(i % 50)}`,
    fields: i % 3 ? {} : { n: i, nested: { ok: true } },
  })),
});

test('decodes what the generated decoder decodes', async (t) => {
  for (const n of [0, 1, 499, 500, 501, 2000]) {
    const bytes = LogRequest.encode(request(n)).finish();
    t.deepEqual(await decodeLogRequest(bytes), LogRequest.decode(bytes), `${n} entries`);
  }
  // Unknown fields are skipped, and the id may come after the entries.
  const bytes = Buffer.concat([LogRequest.encode({ id: '', logs: request(3).logs }).finish(), Buffer.from([0x18, 0x05, 0x0a, 0x01, 0x7a])]);
  t.deepEqual(await decodeLogRequest(bytes), LogRequest.decode(bytes));
  t.is((await decodeLogRequest(bytes)).id, 'z');
});

test("a large request is decoded over several turns of the event loop: other callers' work runs in between", async (t) => {
  const bytes = LogRequest.encode(request(2000)).finish();
  let done = false;
  const decoding = decodeLogRequest(bytes, 500).then((r) => ((done = true), r));
  // Work queued after the decode started (another caller's request, say) runs before the decode ends.
  await new Promise((resolve) => setImmediate(resolve));
  t.false(done);
  t.is((await decoding).logs.length, 2000);
  t.true(done);
});

test('malformed bytes are refused, as by the generated decoder', async (t) => {
  const bytes = LogRequest.encode(request(3)).finish().subarray(0, 40);
  t.throws(() => LogRequest.decode(bytes));
  await t.throwsAsync(() => decodeLogRequest(bytes));
});
