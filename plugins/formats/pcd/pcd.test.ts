// The PCD codec on made-up clouds: every encoding, organized or not, the unit, any field layout and
// bad files. The real Kinect-class clouds are read in drivers/camera/pointcloud/pcd-real.test.ts.
import test from 'ava';
import { lzfCompress } from './lzf.js';
import { PcdError } from './pcd-header.js';
import { readPcd } from './pcd-reader.js';
import { writePcd } from './pcd-writer.js';
import type { PointCloud } from '../../apis/camera.js';

function sampleCloud(organized: boolean, colors: boolean): PointCloud {
  const width = organized ? 4 : 7,
    height = organized ? 3 : 1;
  const n = width * height;
  const positions = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) positions.set([i * 10.5 - 20, -i * 3.25, 500 + i], i * 3);
  positions.set([NaN, NaN, NaN], 3 * 2); // point 2 unseen
  return { width, height, positions, colors: colors ? Uint32Array.from({ length: n }, (_, i) => (0xff000000 | (i * 0x010203)) >>> 0) : undefined };
}

for (const encoding of ['ascii', 'binary', 'binary_compressed'] as const) {
  for (const organized of [true, false]) {
    test(`write then read ${encoding}, ${organized ? 'organized' : 'unorganized'}: same points (mm), NaN kept, colour exact`, (t) => {
      const cloud = sampleCloud(organized, true);
      const bytes = writePcd(cloud, { encoding });
      const text = bytes.toString('latin1');
      t.regex(text, new RegExp(`DATA ${encoding}\\n`));
      t.regex(text, new RegExp(`WIDTH ${cloud.width}\\nHEIGHT ${cloud.height}\\n`));
      const back = readPcd(bytes);
      t.is(back.width, cloud.width);
      t.is(back.height, cloud.height);
      for (let i = 0; i < cloud.positions.length; i++) {
        if (Number.isNaN(cloud.positions[i])) t.true(Number.isNaN(back.positions[i]));
        else t.true(Math.abs(back.positions[i] - cloud.positions[i]) < 1e-3, `${i}: ${back.positions[i]} vs ${cloud.positions[i]}`);
      }
      t.deepEqual(back.colors, cloud.colors);
    });
  }
}

test('the file is in metres: a point at 1500 mm is written as 1.5', (t) => {
  const bytes = writePcd({ width: 1, height: 1, positions: Float32Array.of(0, -250, 1500) }, { encoding: 'ascii' });
  t.true(bytes.toString().endsWith('0 -0.25 1.5\n'));
  t.regex(bytes.toString(), /FIELDS x y z\n/);
});

test('any field layout: extra fields, float64, count > 1, separate r g b, field order', (t) => {
  const header = (fields: string, size: string, type: string, count: string, n: number, data: string) =>
    `# comment\nVERSION 0.7\nFIELDS ${fields}\nSIZE ${size}\nTYPE ${type}\nCOUNT ${count}\nWIDTH ${n}\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS ${n}\nDATA ${data}\n`;
  // ascii with intensity first, normals with count 3, and r g b bytes.
  const ascii =
    header('intensity z y x normal r g b', '4 4 4 4 4 1 1 1', 'F F F F F U U U', '1 1 1 1 3 1 1 1', 2, 'ascii') +
    '7 2.0 0.5 0.25 0 0 1 255 128 1\n9 nan 0 0 0 0 1 0 0 0\n';
  const a = readPcd(Buffer.from(ascii));
  t.deepEqual(Array.from(a.positions.slice(0, 3)), [250, 500, 2000]);
  t.true(Number.isNaN(a.positions[3]) && Number.isNaN(a.positions[5]));
  t.is(a.colors![0], 0x00ff8001);

  // binary with float64 x y z, a uint16 label in between and count-2 field.
  const rec = 8 + 2 + 8 + 8 + 2 * 4;
  const body = Buffer.alloc(rec * 2);
  for (let i = 0; i < 2; i++) {
    const o = i * rec;
    body.writeDoubleLE(1.25 + i, o);
    body.writeUInt16LE(99, o + 8);
    body.writeDoubleLE(-0.5, o + 10);
    body.writeDoubleLE(3, o + 18);
    body.writeFloatLE(1, o + 26);
    body.writeFloatLE(2, o + 30);
  }
  const bin = readPcd(Buffer.concat([Buffer.from(header('x label y z pair', '8 2 8 8 4', 'F U F F F', '1 1 1 1 2', 2, 'binary')), body]));
  t.deepEqual(Array.from(bin.positions), [1250, -500, 3000, 2250, -500, 3000]);
  t.is(bin.colors, undefined);

  // binary_compressed: each field's column one after another, int16 fields.
  const cols = Buffer.alloc(2 * 3 * 2);
  [1, 2, 3, 4, 5, 6].forEach((v, k) => cols.writeInt16LE(v, k * 2));
  const packed = lzfCompress(cols);
  const sizes = Buffer.alloc(8);
  sizes.writeUInt32LE(packed.length, 0);
  sizes.writeUInt32LE(cols.length, 4);
  const comp = readPcd(Buffer.concat([Buffer.from(header('x y z', '2 2 2', 'I I I', '1 1 1', 2, 'binary_compressed')), sizes, packed]));
  t.deepEqual(Array.from(comp.positions), [1000, 3000, 5000, 2000, 4000, 6000]);
});

test('bad files fail with PcdError naming the header key or data section and the rule', (t) => {
  const ok = 'VERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH 2\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n';
  t.notThrows(() => readPcd(Buffer.from(ok)));
  const cases: [string, RegExp][] = [
    [ok.replace('FIELDS x y z', 'FIELDS a b c'), /FIELDS a b c: must include x, y and z/],
    [ok.replace('POINTS 2', 'POINTS 3'), /POINTS 3: must equal WIDTH x HEIGHT = 2/],
    [ok.replace('SIZE 4 4 4', 'SIZE 4 4'), /SIZE: has 2 entries but FIELDS has 3/],
    [ok.replace('TYPE F F F', 'TYPE F Q F'), /TYPE "Q" of field y: must be I, U or F/],
    [ok.replace('SIZE 4 4 4', 'SIZE 4 3 4'), /SIZE 3 of field y: type F allows 4, 8/],
    [ok.replace('DATA ascii', 'DATA zip'), /DATA "zip": must be ascii, binary or binary_compressed/],
    [ok.replace('WIDTH 2', 'WIDTH two'), /WIDTH "two": must be a non-negative integer/],
    [ok.replace('4 5 6\n', ''), /ascii section has 1 points, header declares 2/],
    [ok.replace('DATA ascii\n1 2 3\n4 5 6\n', 'DATA binary\n\u0000\u0000'), /binary section has 2 bytes/],
    [
      ok.replace('DATA ascii\n1 2 3\n4 5 6\n', 'DATA binary_compressed\n\u0004\u0000\u0000\u0000\u0018\u0000\u0000\u0000\u0005abc'),
      /corrupt binary_compressed/,
    ],
    ['hello world', /no DATA line/],
  ];
  for (const [text, message] of cases) t.throws(() => readPcd(Buffer.from(text, 'latin1')), { instanceOf: PcdError, message }, String(message));
});
