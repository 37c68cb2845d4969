// The cloud's error catalogue: each code once, each error with its code and name, its message naming
// what it concerns and the rule, and the fields its callers read kept.
import test from 'ava';
import { status } from '@grpc/grpc-js';
import { MACHINE_ERROR_CODES } from '../../core/serving/errors.js';
import * as errors from './catalogue.js';

test('every code of the cloud catalogue is declared once, says its side, and none is the machine side’s', (t) => {
  t.is(new Set(errors.CLOUD_ERROR_CODES).size, errors.CLOUD_ERROR_CODES.length);
  t.is(errors.CLOUD_ERROR_CODES.length, 9);
  for (const code of errors.CLOUD_ERROR_CODES) {
    t.regex(code, /^CLOUD_ERR_[A-Z0-9_]+$/);
    t.false(MACHINE_ERROR_CODES.includes(code), code);
  }
});

test('each error carries its code and class name, and its message names its subject and rule', (t) => {
  const cases: [Error & { errorCode: string }, string, RegExp][] = [
    [new errors.AdminError('key k1: no such key', status.NOT_FOUND), 'CLOUD_ERR_ADMIN', /key k1: no such key/],
    [new errors.TokenError('token: expired'), 'CLOUD_ERR_TOKEN', /token: expired/],
    [new errors.ReleaseResolutionError('1.2.0 has no release for windows/amd64'), 'CLOUD_ERR_RELEASE_RESOLUTION', /1\.2\.0 has no release/],
    [new errors.ImportError('dataset.jsonl', 'line 3: not JSON'), 'CLOUD_ERR_DATASET_IMPORT', /dataset\.jsonl: line 3: not JSON/],
    [new errors.ZipRefusedError('x.zip', 'entry ../a escapes'), 'CLOUD_ERR_ZIP_REFUSED', /x\.zip: entry \.\.\/a escapes/],
    [
      new errors.StoreLockedError('/data/cloud.duckdb', new Error('lock held')),
      'CLOUD_ERR_STORE_LOCKED',
      /\/data\/cloud\.duckdb is in use by another process: lock held/,
    ],
    [new errors.ThumbnailError(429, 'organization A already has 3 thumbnails waiting'), 'CLOUD_ERR_THUMBNAIL', /organization A/],
    [new errors.PgError('42601', 'syntax error at "SELEC"'), 'CLOUD_ERR_PG', /syntax error/],
    [new errors.ProtocolViolation('message length -1'), 'CLOUD_ERR_PG_PROTOCOL', /message length -1/],
  ];
  for (const [err, code, message] of cases) {
    t.is(err.errorCode, code);
    t.is(err.name, err.constructor.name);
    t.regex(err.message, message, code);
  }
});

test('the fields callers read are kept: a gRPC status, an HTTP status, an SQLSTATE, the file and reason', (t) => {
  t.is(new errors.AdminError('x', status.NOT_FOUND).code, status.NOT_FOUND);
  t.is(new errors.AdminError('x').code, undefined);
  t.is(new errors.ThumbnailError(404, 'x').httpStatus, 404);
  t.is(new errors.PgError('08P01', 'x').code, '08P01');
  const zip = new errors.ZipRefusedError('x.zip', 'too large');
  t.deepEqual([zip.file, zip.reason], ['x.zip', 'too large']);
  t.is(new errors.StoreLockedError('/p', new Error('e')).path, '/p');
});
