// platform-cloud with its binary content in S3 (s3rver here): startCloud takes a BlobStore, which it
// hands to Store.open. Uploads through the real client land as objects under the bucket prefix (none
// in the data dir), read back whole, a delete removes the object, and the orphan sweep at start
// removes an object that no row names while the named ones stay.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { createCloudClient } from '../client/cloud-client.js';
import { S3BlobStore, s3Client } from '../store/s3-blob-store.js';
import { startS3rver } from '../testing/s3rver.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { startCloud } from './cloud-server.js';

test('uploads go to S3 and back; delete and the orphan sweep remove objects, named ones stay', async (t) => {
  const s3 = await startS3rver();
  const dataDir = tempDataDir();
  const options = { endpoint: s3.endpoint, client: { credentials: s3.credentials } };
  const admin = s3Client(options);
  await S3BlobStore.createBucket(admin, 'platform');
  admin.destroy();
  const blobs = await S3BlobStore.open('s3://platform/cloud-a', options);
  const logger = pino({ level: 'silent' });
  let cloud = await startCloud({ dataDir, port: 0, logger, blobs });
  const keysIn = async () => {
    const keys: string[] = [];
    for await (const blob of blobs.list()) keys.push(blob.key);
    return keys.sort();
  };
  try {
    const org = (await createOrganization(cloud.store, { name: 'o' })).id;
    const machine = await createMachine(cloud.store, { org, name: 'rover' });
    const key = await createKey(cloud.store, { org, role: 'owner' });
    const connect = () => createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
    let client = connect();
    // Larger than one part: the streamed upload goes by multipart upload and a copy to its key.
    const big = randomBytes(12 * 1024 * 1024 + 5);
    const small = randomBytes(2000);
    const bigId = await client.dataClient.fileUpload(big, machine.part_id, { fileName: 'scan.bin' });
    const smallId = await client.dataClient.binaryDataCaptureUpload(small, machine.part_id, 'camera', 'cam', 'GetImages', '.png', [new Date(), new Date()]);
    t.deepEqual(await keysIn(), [`${org}/${bigId}`, `${org}/${smallId}`].sort(), 'each upload is one object under <prefix>/<org id>/<id>, no temp objects');
    t.false(existsSync(join(dataDir, 'blobs')), 'nothing of the content is in the data dir');
    const [gotBig, gotSmall] = await client.dataClient.binaryDataByIds([bigId, smallId]);
    t.true(Buffer.from(gotBig.binary).equals(big), 'the streamed upload reads back whole');
    t.true(Buffer.from(gotSmall.binary).equals(small));

    t.is(await client.dataClient.deleteBinaryDataByIds([smallId]), 1);
    t.deepEqual(await keysIn(), [`${org}/${bigId}`], 'delete removes the object');

    // An object no row names (as a kill -9 between content and row leaves), swept at the next start.
    await blobs.put(`${org}/orphan`, Buffer.from('orphan'));
    client.close();
    await cloud.stop();
    process.env.PLATFORM_BLOB_ORPHAN_AGE_S = '0';
    cloud = await startCloud({ dataDir, port: 0, logger, blobs });
    client = connect();
    t.deepEqual(await keysIn(), [`${org}/${bigId}`], 'the sweep removed the orphan and kept the named object');
    const [again] = await client.dataClient.binaryDataByIds([bigId]);
    t.true(Buffer.from(again.binary).equals(big));
    client.close();
  } finally {
    await cloud.stop();
    blobs.close();
    removeDataDir(dataDir);
    await s3.stop();
  }
});
