// -output-telemetry on the real platform-server: the metrics are printed to stderr periodically (and once
// more at stop), each block a whole Prometheus exposition that counts the calls made; a bad interval is a
// start-up error naming the variable; without the flag nothing is printed.
import test from 'ava';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { parsePrometheusText, sampleValue } from '../serving/telemetry/testing/prom-text.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];
const GET_READINGS = '/platform.component.sensor.v1.SensorService/GetReadings';

/** The printed blocks, each parsed. */
function blocks(output: string) {
  const found = [...output.matchAll(/# platform-server telemetry at (\S+): metrics\n([\s\S]*?)# end of telemetry\n/g)];
  return found.map((m) => ({ at: m[1], metrics: parsePrometheusText(m[2]) }));
}

test('-output-telemetry prints the metrics periodically and at stop; they count the calls made', async (t) => {
  const runtime = await spawnRuntime({ components }, { args: ['-output-telemetry'], env: { PLATFORM_TELEMETRY_INTERVAL_MS: '300' } });
  const sensors = new SensorServiceClient(runtime.address, insecure());
  t.teardown(() => sensors.close());
  for (let i = 0; i < 2; i++) await call(sensors, 'getReadings', { name: 'thermo' });
  const printed = await eventually(
    () => blocks(runtime.output()),
    (b) => b.some((block) => sampleValue(block.metrics, 'grpc_server_handled_total', { grpc_method: GET_READINGS, grpc_code: 'OK' }) === 2),
  );
  t.true(printed.length >= 1);
  t.false(Number.isNaN(Date.parse(printed[0].at)));
  t.true(sampleValue(printed.at(-1)!.metrics, 'process_resident_memory_bytes') > 0);
  t.false(runtime.output().includes('not supported'), 'the flag is no longer pending');
  const before = blocks(runtime.output()).length;
  await call(sensors, 'getReadings', { name: 'thermo' });
  t.is(await runtime.stop(), 0);
  const all = blocks(runtime.output());
  t.true(all.length > before, 'a last block at stop');
  t.is(sampleValue(all.at(-1)!.metrics, 'grpc_server_handled_total', { grpc_method: GET_READINGS, grpc_code: 'OK' }), 3);
});

test('a bad PLATFORM_TELEMETRY_INTERVAL_MS is a start-up error naming it; without the flag nothing is printed', async (t) => {
  const bad = spawnRuntime({ components }, { args: ['-output-telemetry'], env: { PLATFORM_TELEMETRY_INTERVAL_MS: 'soon' }, timeoutMs: 60_000 });
  const err = await t.throwsAsync(bad);
  t.regex(err?.message ?? '', /-output-telemetry: PLATFORM_TELEMETRY_INTERVAL_MS must be a number >= 100, got 'soon'/);

  const quiet = await spawnRuntime({ components }, { env: { PLATFORM_TELEMETRY_INTERVAL_MS: '100' } });
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.is(await quiet.stop(), 0);
  t.false(quiet.output().includes('platform-server telemetry'));
});
