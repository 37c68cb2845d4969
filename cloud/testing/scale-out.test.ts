// The scale-out harness: a fresh database with the cloud's schema, a bucket, and credentials that a
// separate process finds through the AWS SDK's standard chain alone (as a cloud process does); what
// one process writes, another reads; stop leaves no server running.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { startScaleOutBackends } from './scale-out.js';

const run = promisify(execFile);
const s3Module = fileURLToPath(new URL('../store/s3-blob-store.ts', import.meta.url));

test('PostgreSQL and S3 for clouds: schema applied, bucket made, credentials from the environment alone', async (t) => {
  const backends = await startScaleOutBackends();
  try {
    t.regex(backends.backendStoreUri, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/cloud_[0-9a-f]{12}$/);
    t.is(backends.artifactsDestination, 's3://platform-scale-out/cloud');
    t.deepEqual(backends.args, [
      '--backend-store-uri',
      backends.backendStoreUri,
      '--artifacts-destination',
      backends.artifactsDestination,
      '--s3-endpoint',
      backends.s3.endpoint,
    ]);
    const tables = await backends.openTables();
    const [{ n }] = await tables.query('SELECT count(*) AS n FROM schema_migrations');
    t.true((n as bigint) > 0n, 'the cloud schema is applied');
    await tables.blobs.put('org/one', Buffer.from('written by the test'));

    // Another process with nothing but the variables: reads what this one wrote, writes one back.
    const script = `
      const { S3BlobStore } = await import(${JSON.stringify(s3Module)});
      const blobs = await S3BlobStore.open(${JSON.stringify(backends.artifactsDestination)}, { endpoint: ${JSON.stringify(backends.s3.endpoint)} });
      const got = await blobs.get('org/one');
      await blobs.put('org/two', Buffer.from('written by the child'));
      blobs.close();
      process.stdout.write(got.toString());`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...clean, ...backends.env } });
    t.is(stdout, 'written by the test');
    t.is((await tables.blobs.get('org/two'))?.toString(), 'written by the child');
  } finally {
    await backends.stop();
  }
  const client = new pg.Client({ connectionString: backends.backendStoreUri, connectionTimeoutMillis: 5000 });
  await t.throwsAsync(client.connect(), undefined, 'the PostgreSQL server is stopped');
});
