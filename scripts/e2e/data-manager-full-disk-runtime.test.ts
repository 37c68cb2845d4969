// A full disk with the real programs (issue 29, item 1): platform-server captures a fake sensor at 50 Hz
// into a 1 MiB tmpfs while sync is off; the disk is filled to the last few KiB, so batches fail part-way
// (ENOSPC) and then find no room, and is freed again while capture goes on; then capture stops and the
// backlog is synced to the real platform-cloud. The sensor counts its calls, so each reading has a number:
// the cloud must hold each number at most once, and of all the readings taken, those not in the cloud are
// exactly as many as the data manager's status counted as errors (before the fix, a torn batch made every
// later record of its file unreadable, and those readings vanished without an error).
import test from 'ava';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { spawnCloud, tempDataDir, removeDataDir } from '../../cloud/testing/spawn-cloud.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually, spawnRuntime } from '../../core/server/testing/spawn-runtime.js';
import { fill, smallFilesystem } from '../../core/datamanager/testing/small-filesystem.js';

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  const res = await callAdminChannel(dataDir, action, args);
  if (!res) throw new Error('admin channel not answering');
  return res.result as T;
}

interface CaptureStatus {
  records: number;
  errors: number;
  last_error: string | null;
}

test('a full capture disk in the real runtime: each reading reaches the cloud once or is counted as an error in the status', async (t) => {
  t.timeout(240_000);
  const fs = smallFilesystem('1m');
  if (!fs) {
    t.log('mounting a tmpfs needs root; full-disk.test.ts covers the rule with an injected ENOSPC');
    t.pass();
    return;
  }
  const dataDir = tempDataDir();
  const cloud = await spawnCloud(dataDir);
  const captureDir = join(fs.dir, 'capture');
  let runtime: Awaited<ReturnType<typeof spawnRuntime>> | undefined;
  try {
    const org = (await admin<{ id: string }>(dataDir, 'org.create', { name: 'full-disk' })).id;
    const machine = await admin<{ part_id: string; part_secret: string }>(dataDir, 'machine.create', { org, name: 'rover' });
    const key = await admin<{ id: string; key: string }>(dataDir, 'key.create', { org, role: 'owner' });
    const config = (sync: boolean) => ({
      cloud: { id: machine.part_id, secret: machine.part_secret, app_address: cloud.address },
      components: [
        {
          name: 'thermo',
          api: 'core:component:sensor',
          model: 'fake',
          // Readings of about 600 bytes: a 50 ms batch does not fit in the few KiB left.
          attributes: { count_calls: true, readings: { pad: 'x'.repeat(600) } },
          service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 50 }] } }],
        },
      ],
      services: [
        {
          name: 'dm',
          api: 'core:service:data_manager',
          model: 'builtin',
          // One open file the whole time (no rotation by interval or size): a torn write would cut off every
          // later record of that file.
          attributes: {
            capture_dir: captureDir,
            sync_interval_mins: 5,
            maximum_capture_file_size_bytes: 1 << 20,
            sync_disabled: !sync,
            capture_disabled: sync,
          },
        },
      ],
    });
    runtime = await spawnRuntime(config(false));
    const dm = new DataManagerServiceClient(runtime.address, insecure());
    t.teardown(() => dm.close());
    const status = async () => (await call(dm, 'doCommand', { name: 'dm', command: { status: {} } })).result.status as Record<string, unknown>;
    const capture = async () => ((await status()).capture as Record<string, CaptureStatus>)['thermo/Readings'];

    await eventually(capture, (c) => c?.records >= 100, { what: '100 readings stored', timeoutMs: 60_000 });
    const filler = join(fs.dir, 'filler');
    fill(filler, 3000);
    const full = await eventually(capture, (c) => c.errors >= 50, { what: 'readings failing on the full disk', timeoutMs: 60_000 });
    t.regex(full.last_error ?? '', /ENOSPC/);
    rmSync(filler);
    const freed = await eventually(capture, (c) => c.records >= full.records + 100, {
      what: '100 more readings stored after the disk was freed',
      timeoutMs: 60_000,
    });
    // No write fails any more: the errors counted now are all there will be.
    const errors = freed.errors;

    // Stop capturing and sync the backlog (the data manager is rebuilt, closing every file).
    runtime.writeConfig(config(true));
    await eventually(status, (s) => s.capture_disabled === true && s.files_waiting === 0 && s.last_error === null, {
      what: 'the backlog synced',
      timeoutMs: 90_000,
    });

    // The sensor's next reading counts the data manager's calls, plus this one.
    const sensors = new SensorServiceClient(runtime.address, insecure());
    t.teardown(() => sensors.close());
    const calls = Number((await call(sensors, 'getReadings', { name: 'thermo' })).readings.count) - 1;

    const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
    try {
      const rows = await client.dataClient.tabularDataBySQL(
        org,
        "SELECT data.readings.count::BIGINT AS c FROM readings WHERE component_name = 'thermo' ORDER BY time_requested",
      );
      const counts = rows.map((r) => Number(r.c));
      t.is(new Set(counts).size, counts.length, 'no reading is stored twice');
      t.true(counts.length > 200, `${counts.length} readings in the cloud`);
      t.is(
        calls - counts.length,
        errors,
        `of ${calls} readings taken, the ${calls - counts.length} not in the cloud are the ones counted as errors (${errors})`,
      );
    } finally {
      client.close();
    }
  } finally {
    await runtime?.stop();
    await cloud.stop();
    removeDataDir(dataDir);
    fs.unmount();
  }
});
