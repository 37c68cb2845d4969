// The stores' flags (issue 33): neither is the embedded default, both is the scale-out mode, one alone
// is refused saying why; flags win over their variables; a bad URI names the flag (or variable) and
// the rule, and never prints a password.
import test from 'ava';
import { Command } from 'commander';
import { backendOptions, blobSweepIntervalMs, redactUri, resolveBackend } from './backend-options.js';

const pgUri = 'postgres://cloud:s3cret@db.internal:5432/platform';
const s3Uri = 's3://platform-data/cloud';

test('neither flag nor variable: the embedded default', (t) => {
  t.deepEqual(resolveBackend({}, {}), { mode: 'embedded' });
  t.deepEqual(resolveBackend({}, { PLATFORM_BACKEND_STORE_URI: '', PLATFORM_ARTIFACTS_DESTINATION: '' }), { mode: 'embedded' }, 'an empty variable is unset');
});

test('both flags: the scale-out mode with the bucket, the prefix and the endpoint', (t) => {
  t.deepEqual(resolveBackend({ backendStoreUri: pgUri, artifactsDestination: s3Uri, s3Endpoint: 'http://127.0.0.1:7480' }, {}), {
    mode: 'scale-out',
    backendStoreUri: pgUri,
    artifactsDestination: s3Uri,
    s3: { bucket: 'platform-data', prefix: 'cloud/' },
    s3Endpoint: 'http://127.0.0.1:7480',
  });
  const bare = resolveBackend({ backendStoreUri: 'postgresql://127.0.0.1/p', artifactsDestination: 's3://bucket' }, {});
  t.like(bare, { mode: 'scale-out', s3: { bucket: 'bucket', prefix: '' }, s3Endpoint: undefined });
});

test('the variables stand in for the flags, and a flag wins over its variable', (t) => {
  const env = { PLATFORM_BACKEND_STORE_URI: 'postgres://env-host/envdb', PLATFORM_ARTIFACTS_DESTINATION: 's3://env-bucket/p' };
  t.like(resolveBackend({}, env), { mode: 'scale-out', backendStoreUri: 'postgres://env-host/envdb', artifactsDestination: 's3://env-bucket/p' });
  t.like(resolveBackend({ backendStoreUri: pgUri }, env), { backendStoreUri: pgUri, artifactsDestination: 's3://env-bucket/p' });
  t.like(resolveBackend({ artifactsDestination: s3Uri }, env), { backendStoreUri: 'postgres://env-host/envdb', artifactsDestination: s3Uri });
});

test('one without the other is refused, saying which is missing and why', (t) => {
  const noBlobs = t.throws(() => resolveBackend({ backendStoreUri: pgUri }, {}));
  t.regex(noBlobs.message, /^--backend-store-uri needs --artifacts-destination s3:\/\/bucket\/prefix/);
  t.regex(noBlobs.message, /give both or neither/);
  t.regex(noBlobs.message, /content they cannot reach/, 'says why');
  const noTables = t.throws(() => resolveBackend({ artifactsDestination: s3Uri }, {}));
  t.regex(noTables.message, /^--artifacts-destination needs --backend-store-uri postgres:\/\//);
  t.regex(noTables.message, /give both or neither/);
  const fromEnv = t.throws(() => resolveBackend({}, { PLATFORM_ARTIFACTS_DESTINATION: s3Uri }));
  t.regex(
    fromEnv.message,
    /^PLATFORM_ARTIFACTS_DESTINATION \(the variable of --artifacts-destination\) needs --backend-store-uri/,
    'names the variable it came from',
  );
  const endpointAlone = t.throws(() => resolveBackend({ s3Endpoint: 'http://127.0.0.1:7480' }, {}));
  t.regex(endpointAlone.message, /^--s3-endpoint applies to the S3 of --artifacts-destination/);
});

test('a bad backend store URI names the flag and the rule, without the password', (t) => {
  for (const bad of ['mysql://u:hunter2@h/db', 'h:5432/db', 'postgres://u:hunter2@/db', 'postgres://u:hunter2@[::1/db']) {
    const err = t.throws(() => resolveBackend({ backendStoreUri: bad, artifactsDestination: s3Uri }, {}), undefined, bad);
    t.regex(err.message, /^--backend-store-uri '.*' must be a PostgreSQL connection URI, postgres:\/\/user\[:password\]@host\[:port\]\/database/, bad);
    t.false(err.message.includes('hunter2'), `no password in the message: ${err.message}`);
  }
  const socket = resolveBackend({ backendStoreUri: 'postgres:///platform?host=/run/postgresql', artifactsDestination: s3Uri }, {});
  t.is(socket.mode, 'scale-out', 'a Unix socket given by ?host= is a host');
  const fromEnv = t.throws(() => resolveBackend({ artifactsDestination: s3Uri }, { PLATFORM_BACKEND_STORE_URI: 'sqlite:///x' }));
  t.regex(fromEnv.message, /^PLATFORM_BACKEND_STORE_URI \(the variable of --backend-store-uri\) 'sqlite:\/\/\/x' must be a PostgreSQL connection URI/);
});

test('a bad artifacts destination names the flag and the rule', (t) => {
  const notS3 = t.throws(() => resolveBackend({ backendStoreUri: pgUri, artifactsDestination: '/var/lib/blobs' }, {}));
  t.regex(notS3.message, /^--artifacts-destination: the artifacts destination '\/var\/lib\/blobs' must be an s3:\/\/bucket\/prefix URI/);
  const badBucket = t.throws(() => resolveBackend({ backendStoreUri: pgUri, artifactsDestination: 's3://My_Bucket/x' }, {}));
  t.regex(badBucket.message, /^--artifacts-destination: the bucket 'My_Bucket' .* must be 3 to 63 lower-case letters/);
});

test('a bad S3 endpoint names the flag and the rule', (t) => {
  for (const bad of ['127.0.0.1:7480', 'ftp://h:1', 'http://h:7480/bucket']) {
    const err = t.throws(() => resolveBackend({ backendStoreUri: pgUri, artifactsDestination: s3Uri, s3Endpoint: bad }, {}), undefined, bad);
    t.regex(err.message, /^--s3-endpoint '.*' must be the http:\/\/ or https:\/\/ URL of an S3-compatible service/, bad);
  }
  t.like(resolveBackend({ backendStoreUri: pgUri, artifactsDestination: s3Uri, s3Endpoint: 'https://s3.example.net' }, {}), {
    s3Endpoint: 'https://s3.example.net',
  });
});

test('redactUri hides only the password', (t) => {
  t.is(redactUri(pgUri), 'postgres://cloud:***@db.internal:5432/platform');
  t.is(redactUri('postgres://cloud@db/p'), 'postgres://cloud@db/p');
  t.is(redactUri('postgres://db/p'), 'postgres://db/p');
});

test('backendOptions parse on a command into the flags resolveBackend takes', (t) => {
  const cmd = new Command('serve').exitOverride();
  for (const option of backendOptions()) cmd.addOption(option);
  cmd.parse(['--backend-store-uri', pgUri, '--artifacts-destination', s3Uri, '--s3-endpoint', 'http://127.0.0.1:7480'], { from: 'user' });
  t.like(resolveBackend(cmd.opts(), {}), { mode: 'scale-out', backendStoreUri: pgUri, s3Endpoint: 'http://127.0.0.1:7480' });
});

test('PLATFORM_BLOB_SWEEP_INTERVAL_S: seconds > 0, default 10 minutes; a bad value names the setting', (t) => {
  t.is(blobSweepIntervalMs({}), 600_000);
  t.is(blobSweepIntervalMs({ PLATFORM_BLOB_SWEEP_INTERVAL_S: '' }), 600_000);
  t.is(blobSweepIntervalMs({ PLATFORM_BLOB_SWEEP_INTERVAL_S: '1.5' }), 1500);
  for (const bad of ['0', '-1', 'often', 'Infinity']) {
    const err = t.throws(() => blobSweepIntervalMs({ PLATFORM_BLOB_SWEEP_INTERVAL_S: bad }));
    t.is(err.message, `PLATFORM_BLOB_SWEEP_INTERVAL_S must be a number of seconds > 0, got '${bad}'`);
  }
});
