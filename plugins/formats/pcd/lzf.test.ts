import test from 'ava';
import { lzfCompress, lzfDecompress, LzfError } from './lzf.js';

function roundTrip(t: import('ava').ExecutionContext, data: Uint8Array) {
  const packed = lzfCompress(data);
  t.deepEqual(lzfDecompress(packed, data.length), data);
  return packed;
}

test('random bytes survive compression (all literal runs)', (t) => {
  // A fixed pseudo-random sequence (a linear congruential generator): incompressible, and the same each run.
  let state = 3;
  const data = new Uint8Array(10000).map(() => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 24);
  roundTrip(t, data);
});

test('repetitive data shrinks and survives, including long and overlapping back references', (t) => {
  const data = new Uint8Array(100000);
  for (let i = 0; i < data.length; i++) data[i] = i % 7 === 0 ? 0 : (i >> 9) & 0xff;
  const packed = roundTrip(t, data);
  t.true(packed.length < data.length / 10);
  roundTrip(t, new Uint8Array(5000).fill(42));
  roundTrip(t, new Uint8Array(0));
  roundTrip(t, Uint8Array.of(1, 2));
});

test('decodes a hand-made stream: literal run then a run-length style back reference', (t) => {
  // literal "ab" (ctrl 1), then ref len 3+2=5 at distance 2 -> "ababa" (ctrl (3<<5)|0, offset byte 1)
  const out = lzfDecompress(Uint8Array.of(1, 97, 98, (3 << 5) | 0, 1), 7);
  t.is(Buffer.from(out).toString(), 'abababa');
  // the long form: len field 7 + extra byte 1 -> 7+1+2 = 10 bytes of 'x'
  t.is(Buffer.from(lzfDecompress(Uint8Array.of(0, 120, (7 << 5) | 0, 1, 0), 11)).toString(), 'x'.repeat(11));
});

test('corrupt streams are rejected with LzfError, never read out of bounds', (t) => {
  t.throws(() => lzfDecompress(Uint8Array.of(5, 1, 2), 6), { instanceOf: LzfError, message: /passes the end/ });
  t.throws(() => lzfDecompress(Uint8Array.of((1 << 5) | 0, 0), 3), { instanceOf: LzfError, message: /before the start/ });
  t.throws(() => lzfDecompress(Uint8Array.of(0, 1), 5), { instanceOf: LzfError, message: /declared 5/ });
  t.throws(() => lzfDecompress(Uint8Array.of(2, 1, 2, 3), 2), { instanceOf: LzfError, message: /declared size 2/ });
  t.throws(() => lzfDecompress(Uint8Array.of(0, 1, 7 << 5), 9), { instanceOf: LzfError, message: /truncated/ });
});
