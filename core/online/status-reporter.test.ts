// The status report: sent at start, on every change (one per burst) and every 10 s even when nothing
// changed, so that the cloud can tell a live part from a silent one. Node's mock timers stand in for the
// clock: the test asserts what is sent at each tick, never how long anything takes.
import test from 'ava';
import { EventEmitter } from 'node:events';
import { mock } from 'node:test';
import { PassThrough } from 'node:stream';
import type { ReportStatusRequest } from '../../gen/platform/app/v1/robot_part.js';
import type { Machine } from '../kernel/machine.js';
import { LogSink, type SinkRecord } from '../logging/sink.js';
import type { CloudLink } from '../cloud-link/cloud-link.js';
import { STATUS_INTERVAL_MS, StatusReporter } from './status-reporter.js';

type Status = { key: string; state: string; error?: string };

class FakeMachine extends EventEmitter {
  state = 'running';
  current: Status[] = [];
  statuses(): Status[] {
    return this.current;
  }
}

/** Lets the reporter's awaited calls settle (promises only: the timers are mocked). */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

test.serial('reports at start, every 10 s unchanged, once per burst of changes, with the resources that are not ready and their errors', async (t) => {
  mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  t.teardown(() => mock.timers.reset());
  const sent: ReportStatusRequest[] = [];
  const link = { partId: 'p1', robot: { reportStatus: () => undefined }, unary: async (_fn: unknown, req: ReportStatusRequest) => void sent.push(req) };
  const machine = new FakeMachine();
  machine.current = [{ key: 'core:component:sensor/a', state: 'ready' }];
  const sink = await LogSink.create({ destination: new PassThrough().resume(), deduplicate: false });
  const inputs = { problem: undefined as string | undefined };
  const reporter = new StatusReporter(
    link as unknown as CloudLink,
    machine as unknown as Machine,
    { version: '1.2.3', revision: () => 4, configProblem: () => inputs.problem },
    sink.logger('platform.online', () => 'info'),
  );
  reporter.start();
  t.teardown(() => reporter.stop());
  await settle();
  t.is(sent.length, 1);
  t.deepEqual(sent[0], {
    id: 'p1',
    runtimeVersion: '1.2.3',
    machineState: 'running',
    configRevision: 4,
    configError: '',
    notReady: [],
    resourceCount: 1,
  });

  t.is(STATUS_INTERVAL_MS, 10_000);
  mock.timers.tick(STATUS_INTERVAL_MS - 1);
  await settle();
  t.is(sent.length, 1);
  mock.timers.tick(1);
  await settle();
  t.is(sent.length, 2, 'a periodic report even though nothing changed');
  t.deepEqual(sent[1], sent[0]);

  // A burst of state changes: one report, naming each resource that is not ready with its error.
  machine.current = [
    { key: 'core:component:sensor/a', state: 'ready' },
    { key: 'core:component:sensor/b', state: 'configuring' },
    { key: 'core:component:sensor/c', state: 'unhealthy', error: 'components[2].model "acme:x:y": module acme:x is not installed' },
  ];
  for (let i = 0; i < 5; i++) machine.emit('state', machine.current[1]);
  mock.timers.tick(1000);
  await settle();
  t.is(sent.length, 3);
  t.deepEqual(sent[2].notReady, [
    { name: 'core:component:sensor/b', state: 'configuring', error: '' },
    { name: 'core:component:sensor/c', state: 'unhealthy', error: 'components[2].model "acme:x:y": module acme:x is not installed' },
  ]);
  t.is(sent[2].resourceCount, 3);

  // A change event that changes nothing reported is not sent again; the config problem is.
  machine.emit('state', machine.current[0]);
  mock.timers.tick(1000);
  await settle();
  t.is(sent.length, 3);
  inputs.problem = 'no machine config: the cloud refused the machine credentials';
  reporter.soon();
  mock.timers.tick(1000);
  await settle();
  t.is(sent.length, 4);
  t.is(sent[3].configError, inputs.problem);

  // Stopped: nothing more.
  reporter.stop();
  mock.timers.tick(STATUS_INTERVAL_MS * 3);
  await settle();
  t.is(sent.length, 4);
});

test.serial('an unreachable cloud is logged once, the reports go on every 10 s, and the return is logged', async (t) => {
  mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  t.teardown(() => mock.timers.reset());
  let up = false;
  let attempts = 0;
  const link = {
    partId: 'p1',
    robot: { reportStatus: () => undefined },
    unary: async () => {
      attempts++;
      if (!up) throw new Error('14 UNAVAILABLE: connection refused');
    },
  };
  const machine = new FakeMachine();
  const lines: SinkRecord[] = [];
  const sink = await LogSink.create({ destination: new PassThrough().resume(), deduplicate: false });
  sink.tap((r) => lines.push(r));
  const reporter = new StatusReporter(
    link as unknown as CloudLink,
    machine as unknown as Machine,
    { version: '1.2.3', revision: () => 0, configProblem: () => 'no machine config: the cloud at x is unreachable' },
    sink.logger('platform.online', () => 'info'),
  );
  reporter.start();
  t.teardown(() => reporter.stop());
  for (let i = 0; i < 3; i++) {
    await settle();
    mock.timers.tick(STATUS_INTERVAL_MS);
  }
  await settle();
  t.is(attempts, 4);
  t.is(lines.filter((l) => l.message === 'cannot report the status to the cloud; retrying every 10 s').length, 1);
  t.is(reporter.current().machineState, 'no_config');
  up = true;
  mock.timers.tick(STATUS_INTERVAL_MS);
  await settle();
  t.is(attempts, 5);
  t.is(lines.filter((l) => l.message === 'status reports reach the cloud again').length, 1);
});
