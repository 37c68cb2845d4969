// platform-agent -d: every supervision decision, version check and download step is logged at debug;
// without -d none of them is. --install without any credentials fails with the reason.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';
import { writeFakeRuntime } from './testing/fake-runtime.js';

const main = fileURLToPath(new URL('./main.ts', import.meta.url));
const machine = (runtime: string) => ({ components: [], agent: { version_control: { 'platform-server': pathToFileURL(runtime).href } } });
const debugLines = (agent: AgentProgram) => agent.lines.filter((l) => l.level === 20).map((l) => l.msg as string);

test('-d logs the version check, each download step and the supervision decisions', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', mode: 'crash-once', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-d', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  // crash-once: the first run exits, the agent decides on a backoff and starts it again.
  const crash = await agent.waitFor('platform-server exited unexpectedly; restarting');
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(crash));
  const debug = debugLines(agent);
  for (const expected of [
    'update check: starting',
    'update check: reading the agent config from the machine config file',
    'version check',
    'download: fetching',
    'download: copying the local file',
    'download: verifying the sha256',
    'version check: a new binary is installed',
    'supervision: platform-server is not running; starting the installed version',
    'supervision: waiting for the serving line',
    'supervision: it crashed before counting as healthy; the backoff grows',
  ]) {
    t.true(debug.includes(expected), `missing debug line "${expected}"; got:\n${debug.join('\n')}`);
  }
  const check = agent.lines.find((l) => l.msg === 'version check' && l.subsystem === 'platform-server');
  t.is(check?.spec, pathToFileURL(runtime).href);
});

test('without -d no debug line is written', async (t) => {
  const box = agentSandbox();
  box.writeConfig(machine(writeFakeRuntime(box.dir, { tag: 'v1', log: box.log })));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  t.deepEqual(debugLines(agent), []);
});

test('--install without any credentials fails, naming the file and the variables, and installs nothing', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'platform-agent-install-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_AGENT_INSTALL_ROOT: root };
  for (const name of ['PLATFORM_API_KEY_ID', 'PLATFORM_API_KEY', 'PLATFORM_PART_ID', 'PLATFORM_AGENT_HOME']) delete env[name];
  const run = spawnSync(process.execPath, ['--import', 'tsx', main, '--install'], { env, encoding: 'utf8' });
  t.is(run.status, 1, run.stdout + run.stderr);
  t.regex(
    run.stderr + run.stdout,
    /--install needs machine credentials: .*etc\/platform\.json.*does not exist; write machine credentials there or set PLATFORM_API_KEY_ID, PLATFORM_API_KEY, PLATFORM_PART_ID/,
  );
  t.false(existsSync(join(root, 'etc/systemd/system/platform-agent.service')));
});
