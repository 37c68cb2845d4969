// platform-agent supervising the real platform-server: start detection from its serving line, and the
// maintenance window read from its own fake sensor, which the test flips through DoCommand.
import test from 'ava';
import { credentials, Metadata } from '@grpc/grpc-js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';

const serverMain = fileURLToPath(new URL('../server/main.ts', import.meta.url));

test('the real platform-server is started, and an env restart waits for its maintenance sensor', async (t) => {
  const box = agentSandbox(0.02);
  const runtime = join(box.dir, 'platform-server.sh');
  writeFileSync(runtime, `#!/bin/sh\nexec '${process.execPath}' --import tsx '${serverMain}' "$@"\n`);
  chmodSync(runtime, 0o755);
  const config = (mode: string) => ({
    network: { bind_address: '127.0.0.1:0' },
    components: [{ name: 'gate', api: 'core:component:sensor', model: 'fake', attributes: { readings: { allowed: false } } }],
    maintenance: { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' },
    agent: { version_control: { 'platform-server': pathToFileURL(runtime).href }, advanced_settings: { platform_server_env: { MODE: mode } } },
  });
  box.writeConfig(config('one'));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving', 0, 90_000);
  const line = await agent.waitFor((l) => typeof l.text === 'string' && /^platform-server serving on /.test(l.text), 0, 90_000);
  const address = String(line.text).replace('platform-server serving on ', '');

  box.writeConfig(config('two'));
  const deferred = await agent.waitFor('restart deferred by the maintenance window', 0, 90_000);
  t.is(deferred.reason, 'core:component:sensor/gate reports allowed = false');
  t.is(agent.count('restarting platform-server'), 0);

  const sensor = new SensorServiceClient(address, credentials.createInsecure());
  t.teardown(() => sensor.close());
  await new Promise<void>((resolve, reject) =>
    sensor.doCommand({ name: 'gate', command: { set: { allowed: true } } }, new Metadata(), (err) => (err ? reject(err) : resolve())),
  );
  const restart = await agent.waitFor('restarting platform-server', agent.lines.indexOf(deferred), 90_000);
  t.is(restart.reason, 'platform_server_env changed');
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(restart), 90_000);
});
