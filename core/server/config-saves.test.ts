// The real runtime follows its -config file through every save (issue 29, item 2): repeated double saves
// by rename (`sed -i` twice, as editors do) and two back-to-back SaveConfig calls each end with the last
// save running, as GetConfig shows it.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const ROUNDS = 12;
const sensor = (t: number) => ({ name: 's', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t } } });
const runningT = (configJson: string) => (JSON.parse(configJson) as { components: ReturnType<typeof sensor>[] }).components[0].attributes.readings.t;

async function runtimeWithClient(t: ExecutionContext) {
  const runtime = await spawnRuntime({ components: [sensor(0)] });
  t.teardown(() => runtime.stop());
  const client = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => client.close());
  const running = async () => runningT((await call(client, 'getConfig', {})).configJson);
  return { runtime, client, running };
}

test('repeated double saves by rename (sed -i twice): the second save of each round is the config running', async (t) => {
  const { runtime, running } = await runtimeWithClient(t);
  let value = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (let save = 0; save < 2; save++) execFileSync('sed', ['-i', '-E', `s/"t": [0-9]+/"t": ${++value}/`, runtime.configPath]);
    await eventually(running, (v) => v === value, { what: `sed -i round ${round}: t ${value} running`, timeoutMs: 15_000 });
  }
  t.is(await running(), 2 * ROUNDS, 'the config running is the last one written');
});

test('two back-to-back SaveConfig calls, repeatedly: the second of each pair is the config running', async (t) => {
  const { runtime, client, running } = await runtimeWithClient(t);
  let value = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (let save = 0; save < 2; save++) {
      const config = { components: [sensor(++value)], network: { bind_address: runtime.address } };
      t.deepEqual(await call(client, 'saveConfig', { configJson: JSON.stringify(config) }), { saved: true, errors: [] });
    }
    await eventually(running, (v) => v === value, { what: `SaveConfig round ${round}: t ${value} running`, timeoutMs: 15_000 });
  }
  t.is(await running(), 2 * ROUNDS, 'the config running is the last one saved');
});
