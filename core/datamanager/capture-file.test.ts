// Capture files: records survive as written, a torn or corrupt tail is detected and cut after a crash.
import test from 'ava';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaptureFileWriter, CLOSED_SUFFIX, OPEN_SUFFIX, readCaptureFile, recoverCaptureFile, type CaptureFileHeader } from './capture-file.js';

const header: CaptureFileHeader = {
  upload_id: 'u-1',
  component_type: 'core:component:sensor',
  component_name: 's',
  method_name: 'Readings',
  method_parameters: {},
  tags: ['a'],
  kind: 'tabular',
};
const base = () => join(mkdtempSync(join(tmpdir(), 'capture-file-')), 'f');
const record = (i: number) => Buffer.from(`record number ${i}`);

test('a closed file holds its header and every record, in order, as .capture', (t) => {
  const b = base();
  const writer = new CaptureFileWriter(b, header);
  for (let i = 0; i < 5; i++) writer.append(record(i));
  t.is(writer.close(), b + CLOSED_SUFFIX);
  t.false(existsSync(b + OPEN_SUFFIX));
  const contents = readCaptureFile(b + CLOSED_SUFFIX);
  t.deepEqual(contents.header, header);
  t.deepEqual(
    contents.records.map(String),
    [0, 1, 2, 3, 4].map((i) => String(record(i))),
  );
  t.false(contents.torn);
});

test('a file closed without records is removed', (t) => {
  const b = base();
  t.is(new CaptureFileWriter(b, header).close(), undefined);
  t.false(existsSync(b + OPEN_SUFFIX));
  t.false(existsSync(b + CLOSED_SUFFIX));
});

test('recovery cuts a record torn by a crash and keeps the whole ones', (t) => {
  const b = base();
  const writer = new CaptureFileWriter(b, header);
  for (let i = 0; i < 3; i++) writer.append(record(i));
  writer.sync(); // the process "dies" here: the fd is never closed
  const whole = statSync(b + OPEN_SUFFIX).size;
  writer.append(record(3));
  truncateSync(b + OPEN_SUFFIX, whole + 6); // the last write got only part-way
  const result = recoverCaptureFile(b + OPEN_SUFFIX);
  t.is(result.path, b + CLOSED_SUFFIX);
  t.is(result.records, 3);
  t.is(result.cutBytes, 6);
  t.is(statSync(b + CLOSED_SUFFIX).size, whole);
  const contents = readCaptureFile(b + CLOSED_SUFFIX);
  t.deepEqual(
    contents.records.map(String),
    [0, 1, 2].map((i) => String(record(i))),
  );
  t.false(contents.torn);
});

test('a record whose checksum does not match ends the file there', (t) => {
  const b = base();
  const writer = new CaptureFileWriter(b, header);
  for (let i = 0; i < 3; i++) writer.append(record(i));
  writer.sync();
  const bytes = readFileSync(b + OPEN_SUFFIX);
  bytes[bytes.length - 2] ^= 0xff; // flip a byte of the last record's payload
  writeFileSync(b + OPEN_SUFFIX, bytes);
  const result = recoverCaptureFile(b + OPEN_SUFFIX);
  t.is(result.records, 2);
  t.deepEqual(
    readCaptureFile(result.path!).records.map(String),
    [0, 1].map((i) => String(record(i))),
  );
});

test('garbage after the last record (a length prefix promising more than is there) is cut', (t) => {
  const b = base();
  const writer = new CaptureFileWriter(b, header);
  writer.append(record(0));
  writer.sync();
  appendFileSync(b + OPEN_SUFFIX, Buffer.from([0xff, 0xff, 0xff, 0x00, 1, 2]));
  const result = recoverCaptureFile(b + OPEN_SUFFIX);
  t.is(result.records, 1);
  t.is(result.cutBytes, 6);
});

test('a crashed file that holds no whole record is removed', (t) => {
  const b = base();
  const writer = new CaptureFileWriter(b, header);
  writer.sync();
  appendFileSync(b + OPEN_SUFFIX, Buffer.from([5, 0, 0, 0]));
  const result = recoverCaptureFile(b + OPEN_SUFFIX);
  t.is(result.path, undefined);
  t.false(existsSync(b + OPEN_SUFFIX));
});
