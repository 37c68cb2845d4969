// The S3 blob store on Ceph's radosgw, a real S3 implementation: a one-node cluster started for this
// file (cloud/testing/radosgw.ts; about 15 s). The same BlobStore contract as the file store and s3rver
// (cloud/testing/blob-store-contract.ts), here with unfinished multipart uploads listed and aborted,
// which s3rver cannot do. Without the Debian packages radosgw, ceph-mon and ceph-osd every test fails,
// naming them: these tests never pass without the service.
import test from 'ava';
import { blobStoreContract, s3ContractStores } from '../testing/blob-store-contract.js';
import { startRadosgw } from '../testing/radosgw.js';
import type { S3Service } from '../testing/s3rver.js';
import { S3BlobStore, s3Client } from './s3-blob-store.js';

let service: S3Service | undefined;
const started = startRadosgw().then((s) => (service = s));
started.catch(() => undefined);
test.after.always(async () => service?.stop());

blobStoreContract(test, 's3 on radosgw', async () => s3ContractStores(await started, true)());

test('radosgw: open refuses wrong credentials and names the reason', async (t) => {
  const s = await started;
  const client = s3Client({ endpoint: s.endpoint, client: { credentials: s.credentials } });
  await S3BlobStore.createBucket(client, 'creds');
  client.destroy();
  const wrong = { endpoint: s.endpoint, client: { credentials: { accessKeyId: s.credentials.accessKeyId, secretAccessKey: 'wrong' } } };
  await t.throwsAsync(S3BlobStore.open('s3://creds/x', wrong), { message: /the bucket 'creds' of s3:\/\/creds\/x at \S+ refuses these credentials/ });
  await t.throwsAsync(S3BlobStore.open('s3://no-such-bucket/x', { endpoint: s.endpoint, client: { credentials: s.credentials } }), {
    message: /the bucket 'no-such-bucket' of s3:\/\/no-such-bucket\/x at \S+ does not exist/,
  });
});

// S3 lists at most 1,000 objects per ListObjectsV2 answer; the sweep must see past the first page, or
// orphans beyond it are never removed. s3rver answers a truncated listing with a 500 InternalError, so
// the continuation is tested here only.
test('radosgw: list() walks every page of a listing of more than 1,000 objects', async (t) => {
  const s = await started;
  const client = s3Client({ endpoint: s.endpoint, client: { credentials: s.credentials } });
  await S3BlobStore.createBucket(client, 'paging');
  client.destroy();
  const store = await S3BlobStore.open('s3://paging/many', { endpoint: s.endpoint, client: { credentials: s.credentials } });
  t.teardown(() => store.close());
  const keys = Array.from({ length: 1005 }, (_, i) => `org/${String(i).padStart(4, '0')}`);
  for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((k) => store.put(k, Buffer.from(k))));
  const listed: string[] = [];
  for await (const blob of store.list()) listed.push(blob.key);
  t.is(listed.length, keys.length, 'each object once');
  t.deepEqual([...listed].sort(), keys);
});
