// At start, platform-cloud removes blob files that a crash left without their committed row, once they
// are older than PLATFORM_BLOB_ORPHAN_AGE_S; uploaded content and young files stay.
import test from 'ava';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { callAdminChannel } from '../admin/channel.js';
import { createCloudClient } from '../client/cloud-client.js';
import { removeDataDir, spawnCloud } from '../testing/spawn-cloud.js';

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  return (await callAdminChannel(dataDir, action, args))!.result as T;
}

test('a restart removes the old orphan only', async (t) => {
  process.env.PLATFORM_BLOB_ORPHAN_AGE_S = '120';
  const first = await spawnCloud();
  const dataDir = first.dataDir;
  try {
    const org = await admin<{ id: string }>(dataDir, 'org.create', { name: 'orphans' });
    const machine = await admin<{ part_id: string; part_secret: string }>(dataDir, 'machine.create', { org: org.id, name: 'm' });
    const uploader = createCloudClient({
      serviceHost: first.address,
      credentials: { type: 'robot-secret', authEntity: machine.part_id, payload: machine.part_secret },
    });
    const id = await uploader.dataClient.binaryDataCaptureUpload(Buffer.from('kept'), machine.part_id, 'cam', 'c', 'GetImages', '.jpg', [
      new Date(),
      new Date(),
    ]);
    uploader.close();
    await first.kill9();

    // What a kill -9 between the blob write and the commit leaves: content under a key no row names.
    const orgBlobs = join(dataDir, 'blobs', org.id);
    mkdirSync(orgBlobs, { recursive: true });
    writeFileSync(join(orgBlobs, 'orphan-old'), 'lost');
    writeFileSync(join(orgBlobs, 'orphan-young'), 'in flight');
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(orgBlobs, 'orphan-old'), old, old);
    utimesSync(join(orgBlobs, id), old, old);

    const second = await spawnCloud(dataDir);
    try {
      t.deepEqual(readdirSync(orgBlobs).sort(), [id, 'orphan-young'].sort());
      t.false(existsSync(join(orgBlobs, 'orphan-old')));
      const key = await admin<{ id: string; key: string }>(dataDir, 'key.create', { org: org.id, role: 'owner' });
      const reader = createCloudClient({ serviceHost: second.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
      const [record] = await reader.dataClient.binaryDataByIds([id]);
      t.deepEqual(Buffer.from(record.binary), Buffer.from('kept'), 'the uploaded content is still served');
      reader.close();
    } finally {
      await second.stop();
    }
  } finally {
    removeDataDir(dataDir);
  }
});
