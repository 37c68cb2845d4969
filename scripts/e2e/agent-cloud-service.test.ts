// The cloud's agent service end to end (here, beside the agent, because cloud/ may not import core/agent): platform-cloud with release channels filled by the admin commands, and
// the real platform-agent resolving stable and pinned versions through it (with sha256 checks).
import test from 'ava';
import { credentials, Metadata, status } from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AgentDeviceServiceClient, type DeviceAgentConfigResponse } from '../../gen/platform/app/agent/v1/agent.js';
import { AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../../cloud/testing/spawn-cloud.js';
import { AgentProgram, agentSandbox } from '../../core/agent/testing/agent-program.js';
import { readRuntimeLog, writeFakeRuntime } from '../../core/agent/testing/fake-runtime.js';
import { sha256File } from '../../core/agent/binary-cache.js';
import { AGENT_NODE_FLAGS } from '../../core/agent/service-install.js';

const cloudMain = fileURLToPath(new URL('../../cloud/server/main.ts', import.meta.url));
const run = promisify(execFile);
const admin = (dataDir: string, args: string[]) => run(process.execPath, ['--import', 'tsx', cloudMain, ...args, '--data-dir', dataDir]);

let cloud: SpawnedCloud;
let org: { id: string };
let machine: { machine_id: string; part_id: string; part_secret: string };
let key: { id: string; key: string };

test.before(async () => {
  cloud = await spawnCloud();
  org = await adminJson(cloud.dataDir, ['org', 'create', 'acme']);
  machine = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  key = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--machine', machine.machine_id, '--role', 'operator']);
});

test.after.always(async () => {
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

type Login = { id: string; key: string } | { partId: string; secret: string };

async function ask(login: Login, partId: string, requested: Record<string, string> = {}): Promise<DeviceAgentConfigResponse> {
  const request =
    'secret' in login
      ? { entity: login.partId, credentials: { type: 'robot-secret', payload: login.secret } }
      : { entity: login.id, credentials: { type: 'api-key', payload: login.key } };
  const auth = new AuthServiceClient(cloud.address, credentials.createInsecure());
  const agent = new AgentDeviceServiceClient(cloud.address, credentials.createInsecure());
  try {
    const token = await new Promise<string>((resolve, reject) => auth.authenticate(request, (err, res) => (err ? reject(err) : resolve(res!.accessToken))));
    const md = new Metadata();
    md.set('authorization', `Bearer ${token}`);
    return await new Promise((resolve, reject) =>
      agent.deviceAgentConfig({ partId, hostInfo: { platform: 'linux/amd64', hostname: 'h', distro: '' }, versions: {}, requested }, md, (err, res) =>
        err ? reject(err) : resolve(res!),
      ),
    );
  } finally {
    auth.close();
    agent.close();
  }
}

test.serial('admin commands validate releases and channels', async (t) => {
  const bad = await t.throwsAsync(
    admin(cloud.dataDir, [
      'agent',
      'release',
      'add',
      '--subsystem',
      'platform-server',
      '--version',
      'latest',
      '--url',
      'http://127.0.0.1:1/y',
      '--sha256',
      'a'.repeat(64),
    ]),
  );
  t.regex(String((bad as { stderr?: string }).stderr), /version must be a semantic version/);
  const noRelease = await t.throwsAsync(admin(cloud.dataDir, ['agent', 'channel', 'set', '--subsystem', 'agent', '--channel', 'stable', '--version', '9.9.9']));
  t.regex(String((noRelease as { stderr?: string }).stderr), /agent 9\.9\.9 has no release/);
  const badConfig = join(cloud.dataDir, 'bad.json');
  writeFileSync(badConfig, JSON.stringify({ agent: { advanced_settings: { platform_server_start_timeout_minutes: 0 } } }));
  const rejected = await t.throwsAsync(admin(cloud.dataDir, ['agent', 'config', 'set', '--machine', machine.machine_id, '--file', badConfig]));
  t.regex(String((rejected as { stderr?: string }).stderr), /agent\.advanced_settings\.platform_server_start_timeout_minutes 0: must be at least 1/);
});

test.serial('the service checks the key covers the machine', async (t) => {
  const otherMachine = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'other']);
  const err = await t.throwsAsync(ask(key, otherMachine.part_id));
  t.is((err as { code?: number }).code, status.PERMISSION_DENIED);
  const missing = await t.throwsAsync(ask(key, 'no-such-part'));
  t.is((missing as { code?: number }).code, status.NOT_FOUND);
  // A part may read its own agent config with its secret, and no other part's.
  const own = await ask({ partId: machine.part_id, secret: machine.part_secret }, machine.part_id);
  t.deepEqual(own.agentConfig, {});
  const foreign = await t.throwsAsync(ask({ partId: machine.part_id, secret: machine.part_secret }, otherMachine.part_id));
  t.is((foreign as { code?: number }).code, status.PERMISSION_DENIED);
});

test.serial('stable, pinned and range versions resolve from the release table; the agent follows them', async (t) => {
  const box = agentSandbox(0.01); // update checks every 3 s instead of 5 min
  const v1 = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const v2 = writeFakeRuntime(box.dir, { tag: 'v2', log: box.log });
  const tampered = writeFakeRuntime(box.dir, { tag: 'tampered', log: box.log });
  await admin(cloud.dataDir, ['agent', 'release', 'add', '--subsystem', 'platform-server', '--version', '1.0.0', '--file', v1, '--channel', 'stable']);
  await admin(cloud.dataDir, ['agent', 'release', 'add', '--subsystem', 'platform-server', '--version', '2.0.0', '--file', v2, '--platform', 'linux/amd64']);
  // 3.0.0 is published from a file holding v2 (the command checks a given sha256 against it), and the
  // file is then replaced by other bytes: machines must refuse it.
  const served3 = join(box.dir, 'platform-server-3.0.0');
  copyFileSync(v2, served3);
  await admin(cloud.dataDir, [
    'agent',
    'release',
    'add',
    '--subsystem',
    'platform-server',
    '--version',
    '3.0.0',
    '--file',
    served3,
    '--sha256',
    await sha256File(v2),
  ]);
  copyFileSync(tampered, served3);

  const stable = await ask(key, machine.part_id);
  t.is(stable.updateInfo['platform-server'].version, '1.0.0');
  t.is(stable.updateInfo['platform-server'].sha256, await sha256File(v1));
  t.regex(stable.errors.agent, /no stable release of agent/);
  t.is((await ask(key, machine.part_id, { 'platform-server': '^2.0.0' })).updateInfo['platform-server'].version, '2.0.0');
  t.is((await ask(key, machine.part_id, { 'platform-server': 'dev' })).updateInfo['platform-server'].version, '3.0.0');

  writeFileSync(box.config, JSON.stringify({ cloud: { app_address: `http://${cloud.address}`, id: machine.part_id, api_key: key } }));
  // Run as the installed service runs it (AGENT_NODE_FLAGS), so gRPC and downloads are covered under them.
  const agent = new AgentProgram(['--dev-mode', '-c', box.config, '-w'], box.env, AGENT_NODE_FLAGS);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => e.tag),
    ['v1'],
  );

  // The channel moves: the agent switches at its next check.
  await admin(cloud.dataDir, ['agent', 'channel', 'set', '--subsystem', 'platform-server', '--channel', 'stable', '--version', '2.0.0']);
  const up = await agent.waitFor('restarting platform-server');
  t.regex(String(up.reason), /platform-server 2\.0\.0 installed/);
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(up));

  // A pinned release whose bytes do not match its sha256 is refused; v2 keeps running.
  const pinTampered = join(box.dir, 'pin3.json');
  writeFileSync(pinTampered, JSON.stringify({ agent: { version_control: { 'platform-server': '3.0.0' } } }));
  await admin(cloud.dataDir, ['agent', 'config', 'set', '--machine', machine.machine_id, '--file', pinTampered]);
  const refused = await agent.waitFor((l) => l.msg === 'version update failed; keeping the installed binary' && /sha256/.test(String(l.err)));
  t.regex(String(refused.err), /expected [0-9a-f]{64}; refused/);

  // Pinning the older version downgrades.
  const pin1 = join(box.dir, 'pin1.json');
  writeFileSync(pin1, JSON.stringify({ agent: { version_control: { 'platform-server': '1.0.0' } } }));
  await admin(cloud.dataDir, ['agent', 'config', 'set', '--machine', machine.machine_id, '--file', pin1]);
  const down = await agent.waitFor((l) => l.msg === 'restarting platform-server' && /1\.0\.0/.test(String(l.reason)));
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(down));
  t.deepEqual(
    readRuntimeLog(box.log)
      .filter((e) => e.kind === 'start')
      .map((e) => e.tag),
    ['v1', 'v2', 'v1'],
  );
});

test.serial('with wait_for_update_check and no reachable cloud the runtime does not start; fast start starts it anyway', async (t) => {
  const box = agentSandbox(0.01);
  const v1 = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  // An installed runtime from an earlier run.
  const first = agentSandbox(0.01);
  first.writeConfig({ agent: { version_control: { 'platform-server': `file://${v1}` } } });
  const seed = new AgentProgram(['--dev-mode', '-c', first.config], { ...first.env, PLATFORM_AGENT_HOME: box.home });
  await seed.waitFor('platform-server is serving');
  await seed.stop();

  writeFileSync(box.config, JSON.stringify({ cloud: { app_address: 'http://127.0.0.1:1', id: machine.part_id, api_key: key } }));
  writeFileSync(box.defaults, JSON.stringify({ advanced_settings: { wait_for_update_check: true } }));
  const waiting = new AgentProgram(['--dev-mode', '-c', box.config, '--defaults', box.defaults], box.env);
  await waiting.waitFor('waiting for an update check before starting platform-server');
  const failed = await waiting.waitFor('update check failed; keeping the current config');
  await waiting.waitFor('update check failed; keeping the current config', waiting.lines.indexOf(failed) + 1);
  t.is(waiting.count('started platform-server'), 0);
  await waiting.stop();

  const fast = new AgentProgram(['--dev-mode', '-c', box.config, '--defaults', box.defaults], { ...box.env, PLATFORM_AGENT_FAST_START: '1' });
  t.teardown(() => fast.stop());
  await fast.waitFor('platform-server is serving');
  t.is(fast.count('waiting for an update check before starting platform-server'), 0);
});

test.serial('a new agent release on the stable channel is installed and the agent exits for the service manager', async (t) => {
  const box = agentSandbox(0.01);
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const nextAgent = join(box.dir, 'platform-agent-2.0.0');
  writeFileSync(nextAgent, '#!/bin/sh\necho "platform-agent 2.0.0"\n');
  const other = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'updater']);
  const otherKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--machine', other.machine_id, '--role', 'owner']);
  const pin = join(box.dir, 'pin.json');
  writeFileSync(pin, JSON.stringify({ agent: { version_control: { 'platform-server': `file://${runtime}` } } }));
  await admin(cloud.dataDir, ['agent', 'config', 'set', '--machine', other.machine_id, '--file', pin]);
  await admin(cloud.dataDir, ['agent', 'release', 'add', '--subsystem', 'agent', '--version', '2.0.0', '--file', nextAgent, '--channel', 'stable']);
  writeFileSync(box.config, JSON.stringify({ cloud: { app_address: `http://${cloud.address}`, id: other.part_id, api_key: otherKey } }));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env, AGENT_NODE_FLAGS);
  const exiting = await agent.waitFor('self-update installed; stopping platform-server and exiting for the service manager to restart the agent');
  t.is(exiting.reason, 'agent 2.0.0 installed');
  t.is(await agent.exited, 0);
  t.is(readFileSync(readlinkSync(join(box.home, 'bin', 'platform-agent')), 'utf8'), readFileSync(nextAgent, 'utf8'));
});
