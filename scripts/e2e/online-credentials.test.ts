// Online machines and their credentials, end to end with the real platform-cloud and platform-server: an
// API key in place of the part secret, a wrong secret, plaintext to a non-loopback address only with
// -allow-insecure-creds, and platform-agent running the runtime from the same credentials file.
import test from 'ava';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from '../../core/agent/testing/agent-program.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { call as cloudCall, partClients, type PartClients } from '../../cloud/parts/testing/part-clients.js';
import { call, insecure } from '../../core/server/testing/grpc.js';
import { spawnRuntime, type SpawnedRuntime } from '../../core/server/testing/spawn-runtime.js';
import { credentialsOf, machineStatus, readings, sensor, until, type Machine } from './testing/online-helpers.js';

let cloud: SpawnedCloud;
let dataDir: string;
let port: string;
let rover: Machine;
/** A second machine, with an API key scoped to it. */
let lab: Machine;
let orgId: string;
let owner: PartClients;
const onlineDir = mkdtempSync(join(tmpdir(), 'platform-online-creds-'));
const env = { PLATFORM_ONLINE_DIR: onlineDir, PLATFORM_ONLINE_RETRY_MAX_MS: '1000' };
const runtimes: SpawnedRuntime[] = [];

test.before(async () => {
  dataDir = tempDataDir();
  // On every interface: the plaintext test reaches it at this machine's non-loopback address.
  cloud = await spawnCloud(dataDir, ['--host', '0.0.0.0']);
  port = cloud.address.slice(cloud.address.lastIndexOf(':') + 1);
  const org = await adminJson(dataDir, ['org', 'create', 'acme']);
  orgId = org.id;
  rover = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  lab = await adminJson<Machine>(dataDir, ['machine', 'create', '--org', org.id, '--name', 'lab']);
  const ownerKey = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  owner = await partClients(cloud.address, ownerKey);
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    { id: rover.part_id, robotConfig: { components: [sensor('thermometer', { celsius: 22 })] } },
    owner.md,
  );
});

test.after.always(async () => {
  for (const r of runtimes) await r.stop();
  owner?.close();
  await cloud?.stop();
  removeDataDir(dataDir);
  removeDataDir(onlineDir);
});

test.serial("an API key scoped to the machine works as the part's credentials (api_key in place of secret)", async (t) => {
  const key = await adminJson<{ id: string; key: string }>(dataDir, ['key', 'create', '--org', orgId, '--machine', lab.machine_id, '--role', 'operator']);
  await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: lab.part_id, robotConfig: { components: [sensor('anemometer', { ms: 3 })] } }, owner.md);
  const runtime = await spawnRuntime(
    { cloud: { id: lab.part_id, api_key: { id: key.id, key: key.key }, app_address: `127.0.0.1:${port}` } },
    { env: { ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-apikey-')) } },
  );
  t.teardown(() => runtime.stop());
  t.deepEqual(await readings(runtime, 'anemometer'), { ms: 3 });
  const { part } = await until('a status report as the part', async () => {
    const r = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: lab.part_id }, owner.md);
    return r.part?.online ? r : undefined;
  });
  t.is(part!.lastStatus?.configRevision, part!.configRevision);
});

test.serial('with no cache and a wrong secret the runtime serves nothing, says why, and keeps retrying', async (t) => {
  const runtime = await spawnRuntime(
    { cloud: { id: rover.part_id, secret: 'wrong', app_address: `127.0.0.1:${port}` } },
    { env: { ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-empty-')) } },
  );
  runtimes.push(runtime);
  const status = await machineStatus(runtime);
  t.deepEqual(status.resources, []);
  t.regex(status.configError, /no machine config: the cloud refused the machine credentials \(wrong part secret or API key\?\)/);
  const refusals = await until('two refusals', async () => {
    const lines = runtime.logs().filter((l) => /the cloud refused the machine credentials/.test(String(l.msg)));
    return lines.length >= 2 ? lines : undefined;
  });
  t.is(refusals[0].level, 50); // error
  t.is(runtime.process.exitCode, null);
  await runtime.stop();
  runtimes.pop();
});

test.serial('credentials go in plaintext to a non-loopback address only with -allow-insecure-creds', async (t) => {
  const ip = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  if (!ip) return t.fail('this machine has no non-loopback IPv4 address to test with');
  const creds = credentialsOf(rover, `${ip}:${port}`);
  const fresh = () => ({ ...env, PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-insecure-')) });
  const refused = await spawnRuntime(creds, { env: fresh() });
  runtimes.push(refused);
  const status = await machineStatus(refused);
  t.regex(status.configError, new RegExp(`refusing to send the machine credentials in plaintext to ${ip.replace(/\./g, '\\.')}.*pass -allow-insecure-creds`));
  t.deepEqual(status.resources, []);
  t.true(refused.logs().some((l) => l.level === 50 && /-allow-insecure-creds/.test(String(l.msg))));
  await refused.stop();
  runtimes.pop();
  const allowed = await spawnRuntime(creds, { env: fresh(), args: ['-allow-insecure-creds'] });
  runtimes.push(allowed);
  t.deepEqual(await readings(allowed, 'thermometer'), { celsius: 22 });
  await allowed.stop();
  runtimes.pop();
});

test.serial('platform-agent runs that runtime online from the same credentials file, with its agent config from the part config', async (t) => {
  for (const r of runtimes.splice(0)) await r.stop();
  const box = agentSandbox(0.02);
  const serverMain = fileURLToPath(new URL('../../core/server/main.ts', import.meta.url));
  const wrapper = join(box.dir, 'platform-server.sh');
  writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' --import tsx '${serverMain}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    {
      id: rover.part_id,
      robotConfig: {
        network: { bind_address: '127.0.0.1:0' },
        components: [sensor('thermometer', { celsius: 30 })],
        agent: { version_control: { 'platform-server': pathToFileURL(wrapper).href } },
      },
    },
    owner.md,
  );
  box.writeConfig(credentialsOf(rover, `127.0.0.1:${port}`));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], { ...box.env, ...env, PLATFORM_ONLINE_DIR: join(box.dir, 'online') });
  t.teardown(() => agent.stop());
  const line = await agent.waitFor((l) => typeof l.text === 'string' && /^platform-server serving on /.test(l.text), 0, 120_000);
  const address = String(line.text).replace('platform-server serving on ', '');
  const sensorClient = new SensorServiceClient(address, insecure());
  t.teardown(() => sensorClient.close());
  const got = (await call(sensorClient, 'getReadings', { name: 'thermometer' })) as { readings: Record<string, unknown> };
  t.deepEqual(got.readings, { celsius: 30 });
  // The runtime the agent runs is online: it follows the next revision saved in the cloud by itself.
  await cloudCall(
    owner.app.updateRobotPart.bind(owner.app),
    {
      id: rover.part_id,
      robotConfig: {
        network: { bind_address: '127.0.0.1:0' },
        components: [sensor('thermometer', { celsius: 31 })],
        agent: { version_control: { 'platform-server': pathToFileURL(wrapper).href } },
      },
    },
    owner.md,
  );
  const next = await until('the next revision through the agent-run runtime', async () => {
    const r = (await call(sensorClient, 'getReadings', { name: 'thermometer' })) as { readings: Record<string, unknown> };
    return r.readings.celsius === 31 ? r.readings : undefined;
  });
  t.deepEqual(next, { celsius: 31 });
});
