// The maintenance window gates the restart that a platform_server_env change asks for.
import test from 'ava';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';
import { readRuntimeLog } from './testing/fake-runtime.js';
import { maintenanceConfigOf, sensorResourceName } from './maintenance-config.js';

const fake = fileURLToPath(new URL('./testing/fake-grpc-runtime.ts', import.meta.url));

test('maintenance config parsing and sensor names', (t) => {
  t.deepEqual(maintenanceConfigOf(undefined), {});
  t.deepEqual(maintenanceConfigOf({ sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'ok' }).config, {
    sensor_name: 'core:component:sensor/gate',
    maintenance_allowed_key: 'ok',
  });
  t.regex(String(maintenanceConfigOf({ sensor_name: 'x' }).error), /sensor_name and maintenance_allowed_key/);
  t.is(sensorResourceName('core:component:sensor/gate'), 'gate');
  t.is(sensorResourceName('gate'), 'gate');
});

test('an env change waits for the maintenance sensor to allow it and for configuration to settle', async (t) => {
  const box = agentSandbox(0.02); // re-ask the window every 200 ms
  const sensorFile = join(box.dir, 'sensor.json');
  const statusFile = join(box.dir, 'status.json');
  writeFileSync(sensorFile, JSON.stringify({ allowed: false }));
  writeFileSync(statusFile, JSON.stringify({ configuring: 0 }));
  const runtime = join(box.dir, 'grpc-runtime.sh');
  writeFileSync(runtime, `#!/bin/sh\nexec '${process.execPath}' --import tsx '${fake}' "$@"\n`);
  chmodSync(runtime, 0o755);
  const env = { ...box.env, FAKE_LOG: box.log, FAKE_SENSOR_FILE: sensorFile, FAKE_STATUS_FILE: statusFile, FAKE_SENSOR_NAME: 'gate' };
  const config = (bar: string) => ({
    maintenance: { sensor_name: 'core:component:sensor/gate', maintenance_allowed_key: 'allowed' },
    agent: { version_control: { 'platform-server': pathToFileURL(runtime).href }, advanced_settings: { platform_server_env: { BAR: bar } } },
  });
  box.writeConfig(config('one'));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');

  box.writeConfig(config('two'));
  const deferred = await agent.waitFor('restart deferred by the maintenance window');
  t.is(deferred.reason, 'core:component:sensor/gate reports allowed = false');
  // Allowed by the sensor, but resources are still configuring.
  writeFileSync(statusFile, JSON.stringify({ configuring: 2 }));
  writeFileSync(sensorFile, JSON.stringify({ allowed: true }));
  const busy = await agent.waitFor((l) => l.msg === 'restart deferred by the maintenance window' && /processing configuration changes/.test(String(l.reason)));
  t.is(agent.count('restarting platform-server'), 0);
  writeFileSync(statusFile, JSON.stringify({ configuring: 0 }));
  const restart = await agent.waitFor('restarting platform-server', agent.lines.indexOf(busy));
  t.is(restart.reason, 'platform_server_env changed');
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(restart));
  t.deepEqual(
    readRuntimeLog(box.log)
      .filter((e) => e.kind === 'start')
      .map((e) => e.bar),
    ['one', 'two'],
  );
});
