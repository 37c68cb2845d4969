// End to end, with the real programs: platform-cloud, and platform-server online, started from a
// credentials file only; the machine config (data manager, sensor, camera) is saved in the cloud with
// UpdateRobotPart, and the data manager syncs with the credentials file's `cloud` section, which the
// online config carries (core/online/online-config.ts). A fake sensor is captured at 20 Hz and a fake camera at 1 Hz for about 30 s; the
// cloud is killed (SIGKILL) for 10 s in the middle, and the runtime is killed with kill -9 once. Afterwards
// the cloud holds every reading the runtime captured exactly once: the sensor counts its calls, so each
// runtime lifetime must appear as the unbroken run 1, 2, ..., n (a duplicate repeats a number, a loss
// leaves a gap); only the tail of the killed lifetime may be missing (captures that kill -9 cut short
// before their batch was written). The restart during the outage runs from the online config cache.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient } from '../../cloud/client/cloud-client.js';
import { call as cloudCall, partClients } from '../../cloud/parts/testing/part-clients.js';
import { spawnCloud, tempDataDir, removeDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually, spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function admin<T>(dataDir: string, action: string, args: Record<string, unknown>): Promise<T> {
  const res = await callAdminChannel(dataDir, action, args);
  if (!res) throw new Error('admin channel not answering');
  return res.result as T;
}

/** The machine config saved in the cloud: no `cloud` section (the credentials file brings it). */
function machineConfig(captureDir: string, captureDisabled = false) {
  return {
    components: [
      {
        name: 'thermo',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: { count_calls: true },
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 20 }] } }],
      },
      {
        name: 'cam',
        api: 'core:component:camera',
        model: 'fake',
        attributes: {},
        service_configs: [
          {
            type: 'data_manager',
            attributes: {
              capture_methods: [{ method: 'GetImage', capture_frequency_hz: 1, additional_params: { mime_type: 'image/png' }, tags: ['cam-tag'] }],
            },
          },
        ],
      },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: captureDir, sync_interval_mins: 0.05, tags: ['e2e'], capture_disabled: captureDisabled },
      },
    ],
  };
}

test('captured data reaches the cloud exactly once across a cloud outage and a kill -9 of the runtime', async (t) => {
  t.timeout(240_000);
  const dataDir = tempDataDir();
  const captureDir = mkdtempSync(join(tmpdir(), 'platform-capture-e2e-'));
  let cloud: SpawnedCloud = await spawnCloud(dataDir);
  const port = cloud.address.split(':').pop()!;
  let runtime: SpawnedRuntime | undefined;
  try {
    const org = (await admin<{ id: string }>(dataDir, 'org.create', { name: 'e2e' })).id;
    const machine = await admin<{ part_id: string; part_secret: string }>(dataDir, 'machine.create', { org, name: 'rover' });
    const key = await admin<{ id: string; key: string }>(dataDir, 'key.create', { org, role: 'owner' });
    const credentials = { cloud: { id: machine.part_id, secret: machine.part_secret, app_address: cloud.address } };
    const env = { PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-capture-e2e-online-')), PLATFORM_ONLINE_RETRY_MAX_MS: '1000' };
    const saveConfig = async (config: Record<string, unknown>) => {
      const owner = await partClients(cloud.address, key);
      try {
        await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: machine.part_id, robotConfig: config }, owner.md);
      } finally {
        owner.close();
      }
    };
    await saveConfig(machineConfig(captureDir));

    runtime = await spawnRuntime(credentials, { env });
    await sleep(8_000);
    await cloud.kill9(); // the cloud goes away for 10 s
    await sleep(4_000);
    runtime.process.kill('SIGKILL'); // ... and the runtime crashes while the backlog grows
    await runtime.exited;
    runtime = await spawnRuntime(credentials, { env }); // from the cached cloud config
    await sleep(6_000);
    cloud = await spawnCloud(dataDir, ['--port', port]);
    await sleep(12_000);

    // Stop capturing through the cloud config (the data manager is rebuilt without targets, closing every
    // file) and let the backlog drain.
    await saveConfig(machineConfig(captureDir, true));
    const dm = new DataManagerServiceClient(runtime.address, insecure());
    const status = await eventually(
      async () => (await call(dm, 'doCommand', { name: 'dm', command: { status: {} } })).result.status as Record<string, unknown>,
      (s) => s.capture_disabled === true && s.files_waiting === 0,
      90_000,
    );
    t.is(status.last_error, null);
    dm.close();
    // The sensor's next reading counts the data manager's calls of this lifetime, plus this one.
    const sensors = new SensorServiceClient(runtime.address, insecure());
    const callsInSecondLifetime = Number((await call(sensors, 'getReadings', { name: 'thermo' })).readings.count) - 1;
    sensors.close();

    const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
    try {
      const data = client.dataClient;
      const [totals] = await data.tabularDataBySQL(
        org,
        "SELECT count(*) AS n, count(DISTINCT time_requested) AS distinct_times FROM readings WHERE component_name = 'thermo'",
      );
      t.is(Number(totals.n), Number(totals.distinct_times), 'no reading is stored twice');
      const rows = await data.tabularDataBySQL(
        org,
        "SELECT data.readings.count::BIGINT AS c FROM readings WHERE component_name = 'thermo' ORDER BY time_requested",
      );
      const counts = rows.map((r) => Number(r.c));
      t.is(counts.length, Number(totals.n));
      // Split into runtime lifetimes where the count starts again; each must be 1..n without gaps.
      const lifetimes: number[][] = [];
      for (const c of counts) {
        if (c === 1) lifetimes.push([]);
        lifetimes.at(-1)!.push(c);
      }
      t.is(lifetimes.length, 2, 'two runtime lifetimes (one kill -9)');
      for (const run of lifetimes)
        t.deepEqual(
          run,
          run.map((_, i) => i + 1),
          'every reading of a lifetime, in order, once',
        );
      t.true(lifetimes[0].length >= 100, `the killed lifetime captured ${lifetimes[0].length} readings`);
      t.is(lifetimes[1].length, callsInSecondLifetime, 'every call of the cleanly stopped lifetime reached the cloud');

      const images = await data.binaryDataByFilter({ componentName: 'cam' }, { includeBinary: false, limit: 1000 });
      t.true(images.data.length >= 15, `${images.data.length} images`);
      for (const image of images.data) {
        t.is(image.metadata.captureMetadata!.mimeType, 'image/png');
        t.deepEqual([...image.metadata.captureMetadata!.tags].sort(), ['cam-tag', 'e2e']);
      }
      const times = images.data.map((i) => i.metadata.timeRequested!.getTime());
      t.is(new Set(times).size, times.length, 'no image is stored twice');
    } finally {
      client.close();
    }
  } finally {
    await runtime?.stop();
    await cloud.stop();
    removeDataDir(dataDir);
    rmSync(captureDir, { recursive: true, force: true });
  }
});
