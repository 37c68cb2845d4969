// Durability: kill -9 the server in the middle of a stream of uploads; after a restart every upload
// that was acknowledged is there, content included.
import test from 'ava';
import { callAdminChannel } from '../admin/channel.js';
import { createCloudClient } from '../client/cloud-client.js';
import { removeDataDir, spawnCloud } from '../testing/spawn-cloud.js';

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  return (await callAdminChannel(dataDir, action, args))!.result as T;
}

test('every acknowledged upload survives kill -9', async (t) => {
  const first = await spawnCloud();
  const dataDir = first.dataDir;
  const org = await admin<{ id: string }>(dataDir, 'org.create', { name: 'durable' });
  const machine = await admin<{ part_id: string; part_secret: string }>(dataDir, 'machine.create', { org: org.id, name: 'm' });
  const key = await admin<{ id: string; key: string }>(dataDir, 'key.create', { org: org.id, role: 'owner' });
  const uploader = createCloudClient({
    serviceHost: first.address,
    credentials: { type: 'robot-secret', authEntity: machine.part_id, payload: machine.part_secret },
  });

  const ackedTabular: string[] = [];
  const ackedBinary = new Map<string, Buffer>();
  let stop = false;
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `w${w}-${i}`;
      try {
        if (i % 2 === 0) {
          const points = Array.from({ length: 20 }, (_, k) => ({ readings: { k } }));
          const times = points.map(() => [new Date(), new Date()] as [Date, Date]);
          await uploader.dataClient.tabularDataCaptureUpload(points, machine.part_id, 'rdk:component:sensor', name, 'Readings', times);
          ackedTabular.push(name);
        } else {
          const content = Buffer.alloc(4096 + i, w + i);
          const id = await uploader.dataClient.binaryDataCaptureUpload(content, machine.part_id, 'cam', name, 'GetImages', '.jpg', [new Date(), new Date()]);
          ackedBinary.set(id, content);
        }
      } catch {
        return; // the server died under this call: it was never acknowledged
      }
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  while (ackedTabular.length + ackedBinary.size < 40) await new Promise((r) => setTimeout(r, 10));
  await first.kill9();
  stop = true;
  await Promise.all(workers);
  uploader.close();
  t.true(ackedTabular.length > 0 && ackedBinary.size > 0);

  const second = await spawnCloud(dataDir);
  const reader = createCloudClient({ serviceHost: second.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  try {
    for (const name of ackedTabular) {
      const page = await reader.dataClient.tabularDataByFilter({ componentName: name });
      t.is(page.data.length, 20, `tabular upload ${name} is complete`);
    }
    const ids = [...ackedBinary.keys()];
    const records = await reader.dataClient.binaryDataByIds(ids);
    t.is(records.length, ids.length);
    for (const r of records) t.true(Buffer.from(r.binary).equals(ackedBinary.get(r.metadata.binaryDataId)!), `content of ${r.metadata.binaryDataId}`);
  } finally {
    reader.close();
    await second.stop();
    removeDataDir(dataDir);
  }
});
