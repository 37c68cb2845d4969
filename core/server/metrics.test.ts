// /metrics on platform-server's web port: Prometheus text that a strict parser accepts, whose counters
// move with the calls made through the real program (gRPC calls per method and code, driver calls per
// resource, the data manager's captures), with the process metrics; the port's Host guard applies.
import test from 'ava';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { parsePrometheusText, sampleValue } from '../serving/telemetry/testing/prom-text.js';
import { webUrlOf } from '../serving/testing/chromium.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const GET_READINGS = '/platform.component.sensor.v1.SensorService/GetReadings';

async function scrape(url: string) {
  const res = await fetch(new URL('/metrics', url));
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) throw new Error(`content-type ${res.headers.get('content-type')}`);
  return parsePrometheusText(await res.text());
}

function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/metrics', url), { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject).end();
  });
}

test('/metrics parses as Prometheus text and counts the calls, driver calls and captures made through platform-server', async (t) => {
  const captureDir = mkdtempSync(join(tmpdir(), 'metrics-capture-'));
  const runtime = await spawnRuntime({
    components: [
      {
        name: 'thermo',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: { readings: { t: 1 } },
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 20 }] } }],
      },
    ],
    services: [{ name: 'dm', api: 'core:service:data_manager', model: 'builtin', attributes: { capture_dir: captureDir, sync_disabled: true } }],
  });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());

  const before = await scrape(url);
  for (let i = 0; i < 3; i++) await call(sensors, 'getReadings', { name: 'thermo' });
  await t.throwsAsync(call(sensors, 'getReadings', { name: 'nope' }));
  const after = await scrape(url);

  const handled = (families: typeof before, code: string) => sampleValue(families, 'grpc_server_handled_total', { grpc_method: GET_READINGS, grpc_code: code });
  t.is(handled(after, 'OK') - handled(before, 'OK'), 3);
  t.is(handled(after, 'NOT_FOUND') - handled(before, 'NOT_FOUND'), 1);
  t.is(
    sampleValue(after, 'grpc_server_handling_seconds_count', { grpc_method: GET_READINGS, grpc_code: 'OK' }) -
      sampleValue(before, 'grpc_server_handling_seconds_count', { grpc_method: GET_READINGS, grpc_code: 'OK' }),
    3,
  );
  t.is(after.get('grpc_server_handling_seconds')?.type, 'histogram');
  // The sensor's GetReadings calls, and the data manager's own capture calls, go through thermo's worker.
  t.true(sampleValue(after, 'platform_driver_call_seconds_count', { resource: 'thermo', method: 'getReadings', outcome: 'ok' }) >= 3);
  t.is(after.get('platform_sessions_active')?.type, 'gauge');
  t.is(sampleValue(after, 'platform_sessions_active'), 0);
  const robot = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => robot.close());
  await call(robot, 'startSession', { resume: '' });
  t.is(sampleValue(await scrape(url), 'platform_sessions_active'), 1, 'a live session counts');
  t.true(sampleValue(after, 'process_cpu_user_seconds_total') > 0, 'process metrics are served');
  t.true(sampleValue(after, 'nodejs_heap_size_used_bytes') > 0);

  const captured = await eventually(
    () => scrape(url),
    (m) => sampleValue(m, 'platform_capture_records_total', { data_manager: 'dm', method: 'thermo/Readings' }) >= 5,
  );
  t.is(captured.get('platform_capture_records_total')?.type, 'counter');
  t.true(captured.get('platform_sync_backlog_files')!.samples.some((s) => s.labels.data_manager === 'dm'));

  // A scraper on loopback is served by any loopback name; a name the port does not know is refused.
  t.is(await statusWithHost(url, `127.0.0.1:${new URL(url).port}`), 200);
  t.is(await statusWithHost(url, `localhost:${new URL(url).port}`), 200);
  t.is(await statusWithHost(url, 'metrics.example.com'), 403);
  t.is((await fetch(new URL('/metrics', url), { method: 'POST' })).status, 405);
});
