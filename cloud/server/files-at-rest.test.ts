// The DuckDB file, its WAL, the blobs and the data dir are readable only by the service's user.
import test from 'ava';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createCloudClient } from '../client/index.js';
import { adminJson, removeDataDir, spawnCloud } from '../testing/spawn-cloud.js';

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    out.push(full);
    if (statSync(full).isDirectory()) walk(full, out);
  }
  return out;
}

test('every file and folder platform-cloud writes is private to its user, even under a permissive umask', async (t) => {
  const previous = process.umask(0o002);
  const cloud = await spawnCloud();
  process.umask(previous);
  try {
    const org = await adminJson(cloud.dataDir, ['org', 'create', 'private']);
    const part = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
    const machine = createCloudClient({
      serviceHost: `http://${cloud.address}`,
      credentials: { type: 'robot-secret', authEntity: part.part_id, payload: part.part_secret },
    });
    await machine.dataClient.fileUpload(Buffer.from('secret content'), part.part_id, { fileName: 'x.bin' });
    machine.close();
    const paths = [cloud.dataDir, ...walk(cloud.dataDir)].filter((p) => !p.endsWith('.sock'));
    t.true(paths.some((p) => p.endsWith('platform.duckdb')));
    t.true(
      paths.some((p) => p.includes(`${join(cloud.dataDir, 'blobs')}/`)),
      'a blob file was written',
    );
    for (const path of paths) t.is(statSync(path).mode & 0o077, 0, `${path} mode ${(statSync(path).mode & 0o777).toString(8)}`);
  } finally {
    await cloud.stop();
    removeDataDir(cloud.dataDir);
  }
});
