// The admin commands print JSON with --json and work whether or not the server runs.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { createCloudClient } from '../client/cloud-client.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir } from '../testing/spawn-cloud.js';

const main = fileURLToPath(new URL('../server/main.ts', import.meta.url));
const run = promisify(execFile);
const uuid = /^[0-9a-f-]{36}$/;

test('without a server the commands open the data dir directly, and a server started later sees the result', async (t) => {
  const dir = tempDataDir();
  try {
    const org = await adminJson(dir, ['org', 'create', 'acme']);
    t.regex(org.id, uuid);
    const loc = await adminJson(dir, ['location', 'create', '--org', org.id, '--name', 'lab']);
    t.regex(loc.id, uuid);
    const machine = await adminJson(dir, ['machine', 'create', '--org', org.id, '--name', 'rover', '--location', loc.id]);
    t.deepEqual(Object.keys(machine).sort(), ['location_id', 'machine_id', 'part_id', 'part_secret']);
    t.is(machine.location_id, loc.id);
    const key = await adminJson(dir, ['key', 'create', '--org', org.id, '--machine', machine.machine_id, '--role', 'operator']);
    t.deepEqual(Object.keys(key).sort(), ['id', 'key']);
    const cloud = await spawnCloud(dir);
    try {
      const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
      t.deepEqual((await client.dataClient.tabularDataByFilter()).data, []);
      client.close();
    } finally {
      await cloud.stop();
    }
  } finally {
    removeDataDir(dir);
  }
});

test('with the server running the commands go through it', async (t) => {
  const cloud = await spawnCloud();
  try {
    const org = await adminJson(cloud.dataDir, ['org', 'create', 'live']);
    const key = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
    const machine = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'bot']);
    // The running server serves the new key and part at once.
    const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
    const id = await client.dataClient.fileUpload(Buffer.from('hi'), machine.part_id, { fileName: 'a.txt' });
    t.truthy(id);
    client.close();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', main, 'org', 'create', 'plain', '--data-dir', cloud.dataDir]);
    t.regex(stdout.trim(), uuid);
  } finally {
    await cloud.stop();
    removeDataDir(cloud.dataDir);
  }
});

test('bad admin input fails with a message naming the field', async (t) => {
  const dir = tempDataDir();
  try {
    const org = await adminJson(dir, ['org', 'create', 'acme']);
    const noOrg = await t.throwsAsync(
      run(process.execPath, ['--import', 'tsx', main, 'key', 'create', '--org', 'missing', '--role', 'owner', '--data-dir', dir]),
    );
    t.regex((noOrg as { stderr?: string }).stderr ?? '', /organization missing does not exist/);
    const both = await t.throwsAsync(
      run(process.execPath, [
        '--import',
        'tsx',
        main,
        'key',
        'create',
        '--org',
        org.id,
        '--location',
        'a',
        '--machine',
        'b',
        '--role',
        'owner',
        '--data-dir',
        dir,
      ]),
    );
    t.regex((both as { stderr?: string }).stderr ?? '', /at most one of location and machine/);
    const role = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', main, 'key', 'create', '--org', org.id, '--role', 'admin', '--data-dir', dir]));
    t.regex((role as { stderr?: string }).stderr ?? '', /--role/);
  } finally {
    removeDataDir(dir);
  }
});
