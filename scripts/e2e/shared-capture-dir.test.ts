// Two real platform-micro-servers capturing into one capture_dir at once (as `npm start` and
// `platform-micro-server -config examples/fake.json` both do into ~/.platform/capture). The one that starts
// second must leave the first's open `.prog` file alone (its owner, in the file name, is alive): the first
// closes its own file without an error and keeps capturing. Once the first is killed with kill -9, the next
// start recovers the file it left open, as after any crash.
import test from 'ava';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { eventually } from '../../core/serving/testing/eventually.js';
import { spawnMicro } from '../../core/micro/testing/spawn-micro.js';
import { removeDataDir } from '../../cloud/testing/spawn-cloud.js';
import type { ServingProgram } from '../../core/serving/testing/spawn-serving.js';

type CaptureStatus = { records: number; open_file_bytes: number; last_error: string | null };

function machineConfig(captureDir: string) {
  return {
    network: { bind_address: '127.0.0.1:0' },
    components: [
      {
        name: 'thermo',
        api: 'core:component:sensor',
        model: 'fake',
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 20 }] } }],
      },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        // No rotation by interval during the test: only the {"sync": {}} commands close files.
        attributes: { capture_dir: captureDir, sync_disabled: true, sync_interval_mins: 30 },
      },
    ],
  };
}

async function captureStatus(program: ServingProgram): Promise<CaptureStatus> {
  const dm = new DataManagerServiceClient(program.address, insecure());
  try {
    const res = (await call(dm, 'doCommand', { name: 'dm', command: { status: {} } })) as { result: { status: { capture: Record<string, CaptureStatus> } } };
    return Object.values(res.result.status.capture)[0];
  } finally {
    dm.close();
  }
}

async function syncCommand(program: ServingProgram): Promise<void> {
  const dm = new DataManagerServiceClient(program.address, insecure());
  try {
    await call(dm, 'doCommand', { name: 'dm', command: { sync: {} } });
  } finally {
    dm.close();
  }
}

function filesOf(dir: string, pid: number, suffix: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(folder, entry.name));
      else if (entry.name.includes(`-p${pid}s`) && entry.name.endsWith(suffix)) found.push(entry.name);
    }
  };
  walk(dir);
  return found;
}

test('a runtime starting on a shared capture_dir leaves the open files of a live runtime alone, and recovers a killed one', async (t) => {
  t.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'platform-shared-capture-'));
  const captureDir = join(dir, 'capture');
  const configPath = join(dir, 'machine.json');
  writeFileSync(configPath, JSON.stringify(machineConfig(captureDir)));
  let first: ServingProgram | undefined;
  let second: ServingProgram | undefined;
  t.teardown(async () => {
    await first?.stop();
    await second?.stop();
    removeDataDir(dir);
  });

  first = await spawnMicro(configPath, join(dir, 'home-1'));
  await eventually(
    () => captureStatus(first!),
    (s) => s.records > 0 && s.open_file_bytes > 0,
    { what: 'the first runtime writing', timeoutMs: 60_000 },
  );
  const firstPid = first.child.pid!;
  t.is(filesOf(captureDir, firstPid, '.prog').length, 1, 'the first runtime has one open file');

  second = await spawnMicro(configPath, join(dir, 'home-2'));
  await eventually(
    () => captureStatus(second!),
    (s) => s.records > 0,
    { what: 'the second runtime writing', timeoutMs: 60_000 },
  );
  t.regex(second.output(), /another runtime sharing capture_dir is writing it/);
  t.notRegex(second.output(), /recovered a capture file/);
  t.is(filesOf(captureDir, firstPid, '.prog').length, 1, "the first runtime's file is still open");

  // The first closes its file itself (today's main: ENOENT, the second had renamed it) and captures on.
  await t.notThrowsAsync(syncCommand(first));
  t.deepEqual(filesOf(captureDir, firstPid, '.capture').length, 1);
  const before = (await captureStatus(first)).records;
  const after = await eventually(
    () => captureStatus(first!),
    (s) => s.records > before && s.open_file_bytes > 0,
    { what: 'the first capturing on', timeoutMs: 60_000 },
  );
  t.is(after.last_error, null);
  t.notRegex(first.output(), /crashed/);

  // kill -9 leaves the first's new file open; the next start on the capture_dir recovers it.
  await first.kill9();
  first = undefined;
  await second.stop();
  second = await spawnMicro(configPath, join(dir, 'home-2'));
  await eventually(
    () => captureStatus(second!),
    (s) => s.records > 0,
    { what: 'the restarted runtime writing', timeoutMs: 60_000 },
  );
  t.regex(second.output(), /recovered a capture file/);
  t.deepEqual(filesOf(captureDir, firstPid, '.prog'), [], "the killed runtime's file was recovered");
  t.is(filesOf(captureDir, firstPid, '.capture').length, 2);
});
