// Capture methods a model declares through the plugin contract are captured like built-in ones: the data
// manager calls the named driver method in the resource's worker with additional_params.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { defineApi } from '../../plugins/api.js';
import { defineModel } from '../../plugins/contract.js';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { createHarness } from '../kernel/fixtures/harness.js';
import { readCaptureFile } from './capture-file.js';
import { dataManagerModel } from '../resource/data-manager-model.js';
import { closedCaptureFiles } from './sync.js';

const stationModel = defineModel({
  api: 'acme:component:weather',
  model: 'acme:weather:station',
  attributes: z.strictObject({}),
  driver: new URL('./fixtures/station-driver.ts', import.meta.url),
  captureMethods: { Wind: { kind: 'tabular', driverMethod: 'captureWind' }, Snapshot: { kind: 'binary', driverMethod: 'captureSnapshot' } },
});

test('a declared tabular and binary capture method are captured through the driver methods they name', async (t) => {
  const h = await createHarness();
  t.teardown(() => h.stop());
  h.registry.register(dataManagerModel);
  h.registry.register(stationModel);
  const captureDir = mkdtempSync(join(tmpdir(), 'dm-declared-'));
  await h.apply({
    components: [
      {
        name: 'station',
        api: 'acme:component:weather',
        model: 'acme:weather:station',
        service_configs: [
          {
            type: 'data_manager',
            attributes: {
              capture_methods: [
                { method: 'Wind', capture_frequency_hz: 10, additional_params: { height_m: 10 } },
                { method: 'Snapshot', capture_frequency_hz: 10 },
              ],
            },
          },
        ],
      },
    ],
    services: [{ name: 'dm', api: 'core:service:data_manager', model: 'builtin', attributes: { capture_dir: captureDir, sync_disabled: true } }],
  });
  const dm = h.machine.resource('dm', defineApi<{ doCommand(c: Record<string, unknown>): Record<string, unknown> }>('core:service:data_manager'));
  type Status = { status: { capture: Record<string, { records: number; errors: number }> } };
  let status: Status | undefined;
  await h.waitFor(() => {
    void dm.doCommand({ status: {} }).then((s) => (status = s as Status));
    return status !== undefined && Object.values(status.status.capture).every((c) => c.records >= 2);
  });
  await dm.doCommand({ sync: {} }); // closes the files
  const files = closedCaptureFiles(captureDir);
  const wind = files.filter((f) => f.path.includes('/weather/station/Wind/')).flatMap((f) => readCaptureFile(f.path).records.map((r) => SensorData.decode(r)));
  const snapshots = files
    .filter((f) => f.path.includes('/weather/station/Snapshot/'))
    .flatMap((f) => readCaptureFile(f.path).records.map((r) => SensorData.decode(r)));
  t.deepEqual(wind[0].struct, { speed_mps: 3.5, call: 1, params: { height_m: 10 } });
  t.deepEqual(
    wind.map((w) => (w.struct as { call: number }).call),
    wind.map((_, i) => i + 1),
  );
  t.is(snapshots[0].metadata!.mimeType, 'image/jpeg');
  t.deepEqual([...snapshots[0].binary!], [0xff, 0xd8, 0xff, 0xe0]);
  t.is(readCaptureFile(files.find((f) => f.path.includes('/Snapshot/'))!.path).header.kind, 'binary');
});
