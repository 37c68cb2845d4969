// platform-agent supervising a fake platform-server: start detection, start timeout, crash restart,
// platform_server_env restarts (and no restart for other changes), disable_platform_server.
import test from 'ava';
import { pathToFileURL } from 'node:url';
import { AgentProgram, agentSandbox } from './testing/agent-program.js';
import { readRuntimeLog, writeFakeRuntime } from './testing/fake-runtime.js';

function machine(runtime: string, agent: Record<string, unknown> = {}, advanced: Record<string, unknown> = {}) {
  return {
    components: [],
    agent: { ...agent, version_control: { 'platform-server': pathToFileURL(runtime).href }, advanced_settings: advanced },
  };
}

test('the runtime counts as started when it prints its serving line', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  const serving = await agent.waitFor('platform-server is serving');
  t.is(serving.address, '127.0.0.1:45678');
  const [start] = readRuntimeLog(box.log);
  t.is(start.tag, 'v1');
  t.is(start.args, `-config ${box.config}`);
  t.is(start.foo, 'agent-env', 'the runtime inherits the agent environment');
  t.is(await agent.stop(), 0);
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => e.kind),
    ['start', 'term'],
    'stopping the agent stops the runtime with SIGTERM',
  );
});

test('a runtime that never prints serving is killed and restarted after the start timeout', async (t) => {
  const box = agentSandbox(0.005); // 1 minute -> 300 ms
  const runtime = writeFakeRuntime(box.dir, { tag: 'mute', mode: 'silent', log: box.log });
  box.writeConfig(machine(runtime, {}, { platform_server_start_timeout_minutes: 1 }));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  const timeout = await agent.waitFor('platform-server did not start in time; killing and restarting it');
  t.is(timeout.minutes, 1);
  const first = agent.lines.indexOf(timeout);
  await agent.waitFor('started platform-server', first);
  const events = readRuntimeLog(box.log);
  t.is(events[0].kind, 'start');
  t.true(
    events.some((e) => e.kind === 'term' && e.pid === events[0].pid),
    'the first run was stopped',
  );
  t.is(agent.count('platform-server is serving'), 0);
});

test('a crashed runtime is restarted', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'flaky', mode: 'crash-once', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  const crash = await agent.waitFor('platform-server exited unexpectedly; restarting');
  t.is(crash.reason, 'exit code 3, signal null');
  t.is(crash.delaySeconds, 1, 'the first restart comes after 1 s (scaled), well within 5 s');
  await agent.waitFor('started platform-server', agent.lines.indexOf(crash));
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(crash));
  t.is(readRuntimeLog(box.log).filter((e) => e.kind === 'start').length, 2);
});

test('a runtime that keeps crashing is restarted with growing delays', async (t) => {
  const box = agentSandbox(0.01);
  const runtime = writeFakeRuntime(box.dir, { tag: 'broken', mode: 'crash-always', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  let from = 0;
  const delays: unknown[] = [];
  for (let i = 0; i < 4; i++) {
    const crash = await agent.waitFor('platform-server exited unexpectedly; restarting', from);
    delays.push(crash.delaySeconds);
    from = agent.lines.indexOf(crash) + 1;
  }
  t.deepEqual(delays, [1, 2, 4, 8]);
});

test('a runtime that served long enough counts as healthy: its next crash restarts after the first delay', async (t) => {
  const box = agentSandbox(0.001); // healthy after 1 minute -> 60 ms of serving
  const runtime = writeFakeRuntime(box.dir, { tag: 'late', mode: 'crash-late', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  let from = 0;
  const delays: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    const crash = await agent.waitFor('platform-server exited unexpectedly; restarting', from);
    delays.push(crash.delaySeconds);
    from = agent.lines.indexOf(crash) + 1;
  }
  t.deepEqual(delays, [1, 1, 1]);
});

test('serving-line addresses', async (t) => {
  const { servingAddress } = await import('./runtime-process.js');
  t.is(servingAddress('platform-server serving on 127.0.0.1:8080'), '127.0.0.1:8080');
  t.is(servingAddress('{"level":30,"msg":"serving at grpc://localhost:8080"}'), 'localhost:8080');
  t.is(servingAddress('serving [::1]:9090'), '[::1]:9090');
  t.is(servingAddress('serving'), '', 'a serving line without an address still counts as started');
  t.is(servingAddress('starting up on 127.0.0.1:8080'), undefined);
  // platform-server's own JSON log line, with msg last and the address in a field.
  t.is(servingAddress('{"level":30,"time":"2026-11-21T13:31:19.074Z","address":"127.0.0.1:45353","tls":false,"msg":"serving"}'), '127.0.0.1:45353');
  t.is(servingAddress('{"level":30,"msg":"serving"}'), '');
  t.is(servingAddress('{"level":30,"msg":"stopped serving? no","note":"x"}'), '');
  t.is(servingAddress('{"level":30,"msg":"config loaded","path":"/serving/x.json"}'), undefined);
});

test('only a platform_server_env change restarts the runtime, with the new environment', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  box.writeConfig(machine(runtime, {}, { platform_server_env: { BAR: 'one' } }));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');

  // Other settings change: no restart.
  box.writeConfig(machine(runtime, {}, { platform_server_env: { BAR: 'one' }, platform_server_start_timeout_minutes: 7, debug: true }));
  const changed = await agent.waitFor('agent config changed');
  // Then the env changes: exactly one restart.
  box.writeConfig(machine(runtime, {}, { platform_server_env: { BAR: 'two', FOO: 'override' }, platform_server_start_timeout_minutes: 7, debug: true }));
  const restart = await agent.waitFor('restarting platform-server', agent.lines.indexOf(changed) + 1);
  t.is(restart.reason, 'platform_server_env changed');
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(restart));
  t.is(agent.count('restarting platform-server'), 1);
  const starts = readRuntimeLog(box.log).filter((e) => e.kind === 'start');
  t.deepEqual(
    starts.map((e) => [e.bar, e.foo]),
    [
      ['one', 'agent-env'],
      ['two', 'override'],
    ],
  );
  t.true(readRuntimeLog(box.log).some((e) => e.kind === 'term' && e.pid === starts[0].pid));
});

test('disable_platform_server stops the runtime and enabling it starts it again', async (t) => {
  const box = agentSandbox();
  const runtime = writeFakeRuntime(box.dir, { tag: 'v1', log: box.log });
  box.writeConfig(machine(runtime));
  const agent = new AgentProgram(['--dev-mode', '-c', box.config], box.env);
  t.teardown(() => agent.stop());
  await agent.waitFor('platform-server is serving');
  box.writeConfig(machine(runtime, {}, { disable_platform_server: true }));
  const disabled = await agent.waitFor('platform-server disabled; stopping it');
  await agent.waitFor('stopping platform-server', agent.lines.indexOf(disabled));
  box.writeConfig(machine(runtime, {}, { disable_platform_server: false }));
  const enabled = await agent.waitFor('platform-server enabled; starting it');
  await agent.waitFor('platform-server is serving', agent.lines.indexOf(enabled));
  t.deepEqual(
    readRuntimeLog(box.log).map((e) => e.kind),
    ['start', 'term', 'start'],
  );
});
