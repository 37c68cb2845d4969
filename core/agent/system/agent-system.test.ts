// The real agent applies system_configuration when configured: in dev mode the files go under
// <dev folder>/system, the commands are logged instead of run, a saved change is applied again, and
// the runtime is supervised throughout.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from '../testing/agent-program.js';
import { writeFakeRuntime } from '../testing/fake-runtime.js';
import { JOURNALD_DROP_IN } from './journald.js';

test('the agent writes the journald drop-in, logs the restart command, and re-applies a change', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'sys', log: box.log });
  const machine = (systemMax: number) => ({
    components: [],
    agent: {
      version_control: { 'platform-server': pathToFileURL(runtime).href },
      system_configuration: { logging_journald_system_max_use_megabytes: systemMax, logging_journald_runtime_max_use_megabytes: -1 },
    },
  });
  box.writeConfig(machine(256));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  const dropIn = join(box.home, 'system', JOURNALD_DROP_IN);
  const first = await agent.waitFor('system configuration applied');
  t.deepEqual(first.files, [JOURNALD_DROP_IN]);
  t.true(readFileSync(dropIn, 'utf8').endsWith('[Journal]\nSystemMaxUse=256M\n'));
  const cmd = await agent.waitFor((l) => l.msg === 'system command not run (dev mode or install root)');
  t.is(cmd.command, 'systemctl restart systemd-journald');
  await agent.waitFor('platform-server is serving');

  const mark = agent.lines.length;
  box.writeConfig(machine(-1));
  await agent.waitFor('system configuration applied', mark);
  t.true(readFileSync(dropIn, 'utf8').endsWith('[Journal]\n'));
  t.is(agent.count('platform-server is serving'), 1, 'a system setting does not restart the runtime');
  t.is(await agent.stop(), 0);
});
