// --install against a temporary root: the systemd unit, its enablement, the credentials from the
// install-time environment and the bin/platform-agent link.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentPaths } from './paths.js';
import { windowsServiceCommands } from './service-install.js';

const main = fileURLToPath(new URL('./main.ts', import.meta.url));

test('--install writes and enables the platform-agent unit with Restart=always', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'platform-agent-install-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PLATFORM_AGENT_INSTALL_ROOT: root,
    PLATFORM_API_KEY_ID: 'kid',
    PLATFORM_API_KEY: 'secret',
    PLATFORM_PART_ID: 'part-1',
    PLATFORM_APP_ADDRESS: 'http://127.0.0.1:9',
  };
  delete env.PLATFORM_AGENT_HOME;
  const run = spawnSync(process.execPath, ['--import', 'tsx', main, '--install'], { env, encoding: 'utf8' });
  t.is(run.status, 0, run.stdout + run.stderr);
  const unitFile = join(root, 'etc/systemd/system/platform-agent.service');
  const unit = readFileSync(unitFile, 'utf8');
  t.regex(unit, /^Restart=always$/m);
  t.regex(unit, /^RestartSec=5$/m);
  t.regex(unit, /^WantedBy=multi-user\.target$/m);
  t.regex(unit, new RegExp(`^ExecStart=${join(root, 'opt/platform/bin/platform-agent')} --config ${join(root, 'etc/platform.json')} `, 'm'));
  t.is(readlinkSync(join(root, 'etc/systemd/system/multi-user.target.wants/platform-agent.service')), unitFile);
  const creds = JSON.parse(readFileSync(join(root, 'etc/platform.json'), 'utf8'));
  t.deepEqual(creds, { cloud: { app_address: 'http://127.0.0.1:9', id: 'part-1', api_key: { id: 'kid', key: 'secret' } } });
  t.is(statSync(join(root, 'etc/platform.json')).mode & 0o777, 0o600, 'credentials readable by root only');
  const launcher = readlinkSync(join(root, 'opt/platform/bin/platform-agent'));
  t.regex(readFileSync(launcher, 'utf8'), /^#!\/bin\/sh\n[^]*exec .*main\.ts' "\$@"\n$/);
  t.true((statSync(launcher).mode & 0o111) !== 0);
});

test('--install with only some credential variables fails naming the missing ones', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'platform-agent-install-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_AGENT_INSTALL_ROOT: root, PLATFORM_API_KEY_ID: 'kid' };
  delete env.PLATFORM_API_KEY;
  delete env.PLATFORM_PART_ID;
  const run = spawnSync(process.execPath, ['--import', 'tsx', main, '--install'], { env, encoding: 'utf8' });
  t.is(run.status, 1);
  t.regex(run.stderr + run.stdout, /PLATFORM_API_KEY, PLATFORM_PART_ID must also be set/);
});

test('the Windows service is created with restart-on-failure after 5 s', (t) => {
  const paths = agentPaths({ devMode: false, env: {} });
  const cmds = windowsServiceCommands('C:\\opt\\platform\\bin\\platform-agent.exe', paths);
  t.deepEqual(cmds[0].slice(0, 3), ['sc.exe', 'create', 'platform-agent']);
  t.true(cmds[1].includes('restart/5000/restart/5000/restart/5000'));
});
