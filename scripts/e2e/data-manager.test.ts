// The data manager inside platform-server: what each api's capture methods store, the status DoCommand,
// clear errors for an unusable capture_dir, disk-full deletion with counts in the log, and the selective
// syncer gating sync.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture } from '../../cloud/testing/tenancy-fixture.js';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { ResourceState, RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually, spawnRuntime } from '../../core/server/testing/spawn-runtime.js';
import { readCaptureFile } from '../../core/datamanager/capture-file.js';
import { closedCaptureFiles } from '../../core/datamanager/sync.js';

const captures = (methods: unknown[]) => [{ type: 'data_manager', attributes: { capture_methods: methods } }];
const dataManager = (attributes: Record<string, unknown>) => ({ name: 'dm', api: 'core:service:data_manager', model: 'builtin', attributes });

async function status(client: DataManagerServiceClient): Promise<Record<string, unknown>> {
  return (await call(client, 'doCommand', { name: 'dm', command: { status: {} } })).result.status as Record<string, unknown>;
}

/** Every record of every closed capture file, by `<subtype>/<resource>/<method>`. */
function capturedRecords(dir: string): Map<string, SensorData[]> {
  const found = new Map<string, SensorData[]>();
  for (const file of closedCaptureFiles(dir)) {
    const key = file.path
      .slice(dir.length + 1)
      .split('/')
      .slice(0, 3)
      .join('/');
    const records = readCaptureFile(file.path).records.map((r) => SensorData.decode(r));
    found.set(key, [...(found.get(key) ?? []), ...records]);
  }
  return found;
}

test('each api capture method stores its data: board, encoder, motor, camera and vision', async (t) => {
  const captureDir = mkdtempSync(join(tmpdir(), 'dm-apis-'));
  const runtime = await spawnRuntime({
    components: [
      {
        name: 'board1',
        api: 'core:component:board',
        model: 'fake',
        attributes: { analogs: [{ name: 'pot', pin: '32', value: 512 }] },
        service_configs: captures([
          { method: 'Analogs', capture_frequency_hz: 5, additional_params: { reader_1: 'pot' } },
          { method: 'Gpios', capture_frequency_hz: 5, additional_params: { pin_1: '12' } },
        ]),
      },
      {
        name: 'enc',
        api: 'core:component:encoder',
        model: 'fake',
        attributes: {},
        service_configs: captures([{ method: 'Position', capture_frequency_hz: 5 }]),
      },
      {
        name: 'wheel',
        api: 'core:component:motor',
        model: 'gpio',
        attributes: { board: 'board1', pins: { pwm: '12', dir: '16' }, encoder: 'enc', ticks_per_rotation: 100 },
        service_configs: captures([
          { method: 'Position', capture_frequency_hz: 5 },
          { method: 'IsPowered', capture_frequency_hz: 5 },
        ]),
      },
      {
        name: 'cam',
        api: 'core:component:camera',
        model: 'fake',
        attributes: {},
        service_configs: captures([
          { method: 'GetImage', capture_frequency_hz: 2 },
          { method: 'GetPointCloud', capture_frequency_hz: 2 },
        ]),
      },
    ],
    services: [
      {
        name: 'obstacles',
        api: 'core:service:vision',
        model: 'obstacles_depth',
        attributes: { camera_name: 'cam' },
        service_configs: captures([{ method: 'GetObjectPointClouds', capture_frequency_hz: 1 }]),
      },
      dataManager({ capture_dir: captureDir, sync_disabled: true }),
    ],
  });
  t.teardown(() => runtime.stop());
  const dm = new DataManagerServiceClient(runtime.address, insecure());
  t.teardown(() => dm.close());
  const s = await eventually(
    () => status(dm),
    (st) => Object.values(st.capture as Record<string, { records: number }>).every((c) => c.records >= 2),
    60_000,
  );
  for (const [key, c] of Object.entries(s.capture as Record<string, { errors: number; last_error: string | null }>))
    t.is(c.errors, 0, `${key}: ${c.last_error}`);
  await call(dm, 'sync', { name: 'dm' }); // closes the open files; sync_disabled keeps them
  const records = capturedRecords(captureDir);
  const analog = (records.get('board/board1/Analogs')![0].struct as { analogs: { pot: Record<string, number> } }).analogs.pot;
  t.is(analog.value, 512);
  t.deepEqual(Object.keys(analog).sort(), ['max_range', 'min_range', 'step_size', 'value']);
  t.deepEqual(records.get('board/board1/Gpios')![0].struct, { gpios: { '12': false } });
  t.deepEqual(records.get('encoder/enc/Position')![0].struct, { value: 0, position_type: 'ticks' });
  t.deepEqual(records.get('motor/wheel/Position')![0].struct, { position: 0 });
  t.deepEqual(records.get('motor/wheel/IsPowered')![0].struct, { is_on: false, power_pct: 0 });
  const image = records.get('camera/cam/GetImage')![0];
  t.is(image.metadata!.mimeType, 'image/vnd.platform.depth+png');
  t.deepEqual([...image.binary!.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
  const cloud = records.get('camera/cam/GetPointCloud')![0];
  t.is(cloud.metadata!.mimeType, 'pointcloud/pcd');
  t.regex(cloud.binary!.subarray(0, 200).toString(), /VERSION/);
  const objects = records.get('vision/obstacles/GetObjectPointClouds')![0];
  t.is(objects.metadata!.mimeType, 'application/vnd.platform.objects');
  t.true(objects.binary!.byteLength > 4);
  const time = (r: SensorData) => r.metadata!.timeRequested!.getTime();
  t.true(records.get('motor/wheel/IsPowered')!.every((r) => r.metadata!.timeReceived!.getTime() >= time(r)));
});

test('an unwritable capture_dir is a clear error of the data manager; the others run; then disk-full deletion logs its counts', async (t) => {
  const blocker = join(mkdtempSync(join(tmpdir(), 'dm-bad-')), 'a-file');
  writeFileSync(blocker, 'not a folder');
  const sensor = {
    name: 's',
    api: 'core:component:sensor',
    model: 'fake',
    attributes: {},
    service_configs: captures([{ method: 'Readings', capture_frequency_hz: 50 }]),
  };
  const runtime = await spawnRuntime({ components: [sensor], services: [dataManager({ capture_dir: join(blocker, 'capture') })] });
  t.teardown(() => runtime.stop());
  const robot = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => robot.close());
  const machine = await eventually(
    () => call(robot, 'getMachineStatus', {}),
    (m) => m.resources.some((r: { name: { name: string }; error: string }) => r.name.name === 'dm' && r.error !== ''),
  );
  const dmStatus = machine.resources.find((r: { name: { name: string } }) => r.name.name === 'dm');
  t.regex(dmStatus.error, /attributes\.capture_dir ".*a-file\/capture": must be a folder the runtime can write/);
  t.true(
    machine.resources.some((r: { name: { name: string }; state: number }) => r.name.name === 's' && r.state === ResourceState.RESOURCE_STATE_READY),
    'the sensor is ready',
  );

  // Fixed, with thresholds that count the disk as full: every 2nd closed file is deleted at each interval.
  const captureDir = mkdtempSync(join(tmpdir(), 'dm-full-'));
  runtime.writeConfig({
    components: [sensor],
    services: [
      dataManager({
        capture_dir: captureDir,
        sync_disabled: true,
        maximum_capture_file_size_bytes: 1024,
        sync_interval_mins: 0.02,
        disk_usage_deletion_threshold: 0,
        capture_dir_deletion_threshold: 0,
        delete_every_nth_when_disk_full: 2,
      }),
    ],
  });
  const line = await eventually(
    () => runtime.logs().find((l) => l.msg === 'disk nearly full: deleted every nth capture file' && (l.deleted as number) > 0),
    (l) => l !== undefined,
    60_000,
  );
  t.is(line!.every_nth, 2);
  t.is(typeof line!.kept, 'number');
  t.true((line!.kept as number) >= (line!.deleted as number));
  t.true((line!.freed_bytes as number) > 0);
});

test('the status reports the backlog; the selective syncer gates sync until should_sync is true', async (t) => {
  const fx = await startFixture();
  t.teardown(() => fx.close());
  const captureDir = mkdtempSync(join(tmpdir(), 'dm-gate-'));
  const runtime = await spawnRuntime({
    cloud: { id: fx.machineA1.part_id, secret: fx.machineA1.part_secret, app_address: fx.cloud.address },
    components: [
      { name: 'gate', api: 'core:component:sensor', model: 'fake', attributes: { readings: { should_sync: false } } },
      {
        name: 'gated',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: {},
        service_configs: captures([{ method: 'Readings', capture_frequency_hz: 20 }]),
      },
    ],
    services: [dataManager({ capture_dir: captureDir, sync_interval_mins: 0.02, selective_syncer_name: 'gate' })],
  });
  t.teardown(() => runtime.stop());
  const dm = new DataManagerServiceClient(runtime.address, insecure());
  t.teardown(() => dm.close());
  const waiting = await eventually(
    () => status(dm),
    (s) => (s.files_waiting as number) >= 2,
  );
  t.is(waiting.uploaded_files, 0);
  t.true((waiting.bytes_waiting as number) > 0);
  t.is(waiting.last_successful_sync, null);
  t.is(waiting.cloud, fx.cloud.address);
  const unknown = await t.throwsAsync(call(dm, 'doCommand', { name: 'dm', command: { flush: {} } }));
  t.regex(unknown!.message, /the data manager understands \{"status": \{\}\} and \{"sync": \{\}\}, got keys flush/);

  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  await call(sensors, 'doCommand', { name: 'gate', command: { set: { should_sync: true } } });
  const synced = await eventually(
    () => status(dm),
    (s) => (s.uploaded_files as number) >= 2 && s.last_successful_sync !== null,
  );
  t.is(synced.last_error, null);
  const count = (await fx.client(fx.keys.ownerA).dataClient.tabularDataByFilter({ componentName: 'gated' }, { countOnly: true })).count;
  t.true(count > 0);
});
