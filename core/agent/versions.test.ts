// Version switches of platform-server through file:// and http:// URLs, and the agent's self-update.
import test from 'ava';
import { createServer } from 'node:http';
import { readFileSync, readlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';
import { readRuntimeLog, writeFakeRuntime } from './testing/fake-runtime.js';
import { AGENT_NODE_FLAGS } from './service-install.js';

const machine = (runtimeVersion: string, agentVersion = 'stable') => ({
  components: [],
  agent: { version_control: { 'platform-server': runtimeVersion, agent: agentVersion } },
});

test('changing platform-server to another file:// URL switches the runtime', async (t) => {
  const box = agentSandbox();
  const v1 = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const v2 = writeFakeRuntime(box.dir, { tag: 'v2', log: box.log });
  box.writeConfig(machine(pathToFileURL(v1).href));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  box.writeConfig(machine(pathToFileURL(v2).href));
  const restart = await agent.waitFor('restarting platform-server');
  t.regex(String(restart.reason), /^platform-server file:.*fake-runtime-v2\.sh installed$/);
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(restart));
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => `${e.kind} ${e.tag}`),
    ['start v1', 'term v1', 'start v2'],
  );
  t.regex(readlinkSync(join(box.home, 'bin', 'platform-server')), /cache\/platform-server-/);
  // Pinning the older one again downgrades.
  box.writeConfig(machine(pathToFileURL(v1).href));
  const back = await agent.waitFor('restarting platform-server', agent.lines.indexOf(restart) + 1);
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(back));
  t.deepEqual(
    readRuntimeLog(box.log)
      .slice(3)
      .map((e) => `${e.kind} ${e.tag}`),
    ['term v2', 'start v1'],
  );
});

test('an http:// URL downloads the runtime from a web server and switches to it (with the service flags)', async (t) => {
  const box = agentSandbox();
  const v1 = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const v2 = readFileSync(writeFakeRuntime(box.dir, { tag: 'web', log: box.log }));
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url!);
    res.writeHead(200, { 'content-type': 'application/octet-stream', etag: '"web-1"' }).end(v2);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/platform-server`;
  box.writeConfig(machine(pathToFileURL(v1).href));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env, AGENT_NODE_FLAGS);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  box.writeConfig(machine(url));
  const downloaded = await agent.waitFor((l) => l.msg === 'downloaded' && l.from === url);
  const restart = await agent.waitFor('restarting platform-server', agent.lines.indexOf(downloaded));
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(restart));
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => `${e.kind} ${e.tag}`),
    ['start v1', 'term v1', 'start web'],
  );
  t.deepEqual(requests, ['/platform-server']);
});

test('self-update installs the new agent and exits for the service manager', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  const newAgent = join(box.dir, 'platform-agent-next.sh');
  writeFileSync(newAgent, '#!/bin/sh\necho "platform-agent next"\n');
  chmodSync(newAgent, 0o644); // the agent marks it executable itself
  box.writeConfig(machine(pathToFileURL(runtime).href));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  await agent.waitFor('platform-server is serving');
  box.writeConfig(machine(pathToFileURL(runtime).href, pathToFileURL(newAgent).href));
  const exiting = await agent.waitFor('self-update installed; stopping platform-server and exiting for the service manager to restart the agent');
  t.regex(String(exiting.reason), /^agent file:.*platform-agent-next\.sh installed$/);
  t.is(await agent.exited, 0);
  const link = readlinkSync(join(box.home, 'bin', 'platform-agent'));
  t.is(readFileSync(link, 'utf8'), readFileSync(newAgent, 'utf8'));
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => e.kind),
    ['start', 'term'],
    'the runtime was stopped before exiting',
  );
  t.is(agent.count('restarting platform-server'), 0, 'the runtime binary did not change, so it was not restarted for it');
});
