// The S3 blob store on s3rver (an S3 fake, started as a child on a free port): the BlobStore contract
// (cloud/testing/blob-store-contract.ts), and what is particular to S3: the s3:// URI, the bucket
// check at open, and key prefixes that keep stores in one bucket apart. The same contract runs on
// Ceph's radosgw in s3-blob-store-radosgw.test.ts.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { blobStoreContract, s3ContractStores } from '../testing/blob-store-contract.js';
import { startS3rver, type S3Service } from '../testing/s3rver.js';
import { S3BlobStore, parseS3Uri, s3Client } from './s3-blob-store.js';
import { minPartBytes } from './s3-blob-writer.js';

let service: S3Service | undefined;
const started = startS3rver().then((s) => (service = s));
// Registered before the tests: a failed start fails every test that awaits it, and is reported.
started.catch(() => undefined);
test.after.always(async () => service?.stop());

blobStoreContract(test, 's3 on s3rver', async () => s3ContractStores(await started, false)());

test('s3:// URIs give the bucket and a key prefix; bad ones are refused by the rule they break', (t) => {
  t.deepEqual(parseS3Uri('s3://blobs'), { bucket: 'blobs', prefix: '' });
  t.deepEqual(parseS3Uri('s3://blobs/'), { bucket: 'blobs', prefix: '' });
  t.deepEqual(parseS3Uri('s3://my.blobs-1/platform/prod/'), { bucket: 'my.blobs-1', prefix: 'platform/prod/' });
  t.deepEqual(parseS3Uri('s3://blobs/a//b'), { bucket: 'blobs', prefix: 'a/b/' });
  t.throws(() => parseS3Uri('https://blobs/x'), { message: /must be an s3:\/\/bucket\/prefix URI/ });
  t.throws(() => parseS3Uri('s3://'), { message: /must be an s3:\/\/bucket\/prefix URI/ });
  t.throws(() => parseS3Uri('s3://Blobs/x'), { message: /bucket 'Blobs'.*lower-case/ });
  t.throws(() => parseS3Uri('s3://ab'), { message: /bucket 'ab'.*3 to 63/ });
  t.throws(() => parseS3Uri('s3://blobs/../x'), { message: /must be a relative path inside the store/ });
});

test('open checks the bucket: a missing or unreachable bucket fails with the reason', async (t) => {
  const s = await started;
  const options = { endpoint: s.endpoint, client: { credentials: s.credentials } };
  await t.throwsAsync(S3BlobStore.open('s3://no-such-bucket/x', options), {
    message: /the bucket 'no-such-bucket' of s3:\/\/no-such-bucket\/x at http:\S+ does not exist/,
  });
  const client = s3Client(options);
  await S3BlobStore.createBucket(client, 'creds');
  await S3BlobStore.createBucket(client, 'creds'); // an existing bucket of ours is fine
  client.destroy();
  // Wrong credentials are tried on radosgw (s3rver does not check them on HEAD).
  await t.throwsAsync(S3BlobStore.open('s3://creds/x', { endpoint: 'http://127.0.0.1:1', client: { credentials: s.credentials } }), {
    message: /the bucket 'creds' of s3:\/\/creds\/x at http:\/\/127.0.0.1:1 is not reachable/,
  });
  t.throws(() => new S3BlobStore(s3Client(options), { bucket: 'creds', prefix: '' }, 1024), { message: /partBytes must be an integer >= 5242880/ });
});

test('stores under different prefixes of one bucket see only their own keys', async (t) => {
  const s = await started;
  const options = { endpoint: s.endpoint, client: { credentials: s.credentials } };
  const client = s3Client(options);
  await S3BlobStore.createBucket(client, 'shared');
  client.destroy();
  const a = await S3BlobStore.open('s3://shared/site-a', options);
  const b = await S3BlobStore.open('s3://shared/site-a2', options);
  const whole = await S3BlobStore.open('s3://shared', options);
  try {
    await a.put('org/k', Buffer.from('a'));
    await b.put('org/k', Buffer.from('b'));
    t.deepEqual(await a.get('org/k'), Buffer.from('a'));
    t.deepEqual(await b.get('org/k'), Buffer.from('b'));
    const keys = async (store: S3BlobStore) => {
      const out: string[] = [];
      for await (const blob of store.list()) out.push(blob.key);
      return out.sort();
    };
    t.deepEqual(await keys(a), ['org/k'], "site-a's list does not reach into site-a2");
    t.deepEqual(await keys(b), ['org/k']);
    t.deepEqual(await keys(whole), ['site-a/org/k', 'site-a2/org/k'], 'the objects sit under <prefix>/<key>');
    await a.delete('org/k');
    t.deepEqual(await b.get('org/k'), Buffer.from('b'));
  } finally {
    for (const store of [a, b, whole]) store.close();
  }
});

test('a streamed upload sends each part as it fills, not at commit', async (t) => {
  const s = await started;
  const options = { endpoint: s.endpoint, client: { credentials: s.credentials } };
  const client = s3Client(options);
  await S3BlobStore.createBucket(client, 'parts');
  const sent: string[] = [];
  client.middlewareStack.add((next, context) => async (args) => (sent.push(context.commandName ?? ''), next(args)), { step: 'initialize' });
  const store = new S3BlobStore(client, { bucket: 'parts', prefix: 'p/' }, minPartBytes);
  try {
    const writer = await store.writer();
    const content = randomBytes(8 * minPartBytes + 1);
    for (let i = 0; i < content.byteLength; i += 64 * 1024) await writer.write(content.subarray(i, i + 64 * 1024));
    // A filled part is sent at once (after the one before it, so at most two parts are held in memory).
    const beforeCommit = sent.filter((c) => c === 'UploadPartCommand').length;
    t.true(beforeCommit >= 7, `parts sent before commit: ${beforeCommit} of 9`);
    await writer.commit('org/k');
    t.deepEqual(
      sent.filter((c) => c !== 'UploadPartCommand'),
      ['CreateMultipartUploadCommand', 'CompleteMultipartUploadCommand', 'CopyObjectCommand', 'DeleteObjectCommand'],
    );
    t.is(sent.filter((c) => c === 'UploadPartCommand').length, 9);
    t.true((await store.get('org/k'))!.equals(content));
  } finally {
    store.close();
  }
});
