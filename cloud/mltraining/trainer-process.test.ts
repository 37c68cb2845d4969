import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrainerLine, TrainerProcess, type TrainerEvent } from './trainer-process.js';
import { maxLineChars } from './trainer-output.js';
import { isRunning } from './testing/processes.js';

test('protocol lines become events; anything else is an info log', (t) => {
  t.deepEqual(parseTrainerLine('{"event": "log", "level": "error", "message": "no labels"}'), { kind: 'log', level: 'error', message: 'no labels' });
  t.deepEqual(parseTrainerLine('{"event": "log", "level": "shout", "message": "x"}'), { kind: 'log', level: 'info', message: 'x' });
  t.deepEqual(parseTrainerLine('{"event": "metrics", "metrics": {"accuracy": 0.5, "bad": "x"}}'), { kind: 'metrics', metrics: { accuracy: 0.5 } });
  t.like(
    parseTrainerLine(
      '{"event": "progress", "epoch": 3, "total_epochs": 9, "loss": 0.1, "metric_name": "map50", "metric": 0.7, "images_per_second": 40, "elapsed_seconds": 2}',
    ),
    { kind: 'progress', epoch: 3, totalEpochs: 9, metricName: 'map50', metric: 0.7 },
  );
  t.deepEqual(parseTrainerLine('{not json'), { kind: 'log', level: 'info', message: '{not json' });
  t.deepEqual(parseTrainerLine('Epoch 1 done'), { kind: 'log', level: 'info', message: 'Epoch 1 done' });
});

test('a trainer that ignores SIGTERM is killed after the grace period; stderr becomes warnings', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'trainer-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const events: TrainerEvent[] = [];
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const trainer = new TrainerProcess(
    {
      command: '/bin/sh',
      args: ['-c', 'trap "" TERM; echo "stubborn" >&2; echo ready; while :; do sleep 1; done'],
      cwd,
      limits: { wallSeconds: 600 },
      killGraceMs: 200,
    },
    (event) => {
      events.push(event);
      if (event.kind === 'log' && event.message === 'ready') started();
    },
  );
  await ready;
  const pid = trainer.pid!;
  trainer.cancel();
  const outcome = await trainer.done;
  t.is(outcome.ending, 'canceled');
  t.is(outcome.signal, 'SIGKILL');
  t.deepEqual(outcome.stderrTail, ['stubborn']);
  t.true(events.some((e) => e.kind === 'log' && e.level === 'warn' && e.message === 'stubborn'));
  t.false(isRunning(pid));
});

test('a command that cannot start reports why', async (t) => {
  const trainer = new TrainerProcess({ command: '/no/such/trainer', args: [], cwd: tmpdir(), limits: { wallSeconds: 60 } }, () => undefined);
  const outcome = await trainer.done;
  t.is(outcome.ending, 'exited');
  t.is(outcome.exitCode, 127); // sh's "not found"
  t.regex(outcome.stderrTail.join('\n'), /not found|No such file/);
});

test('output is read with bounds: a line without end is cut, and a flood of lines waits for its handler', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'trainer-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const seen: string[] = [];
  const trainer = new TrainerProcess(
    // 50 MB without a newline, then 100,000 short lines.
    { command: '/bin/sh', args: ['-c', "head -c 50000000 /dev/zero | tr '\\0' x; echo; seq 1 100000"], cwd, limits: { wallSeconds: 600 } },
    async (event) => {
      if (event.kind === 'log') seen.push(event.message);
      if (seen.length % 100 === 0) await new Promise((resolve) => setImmediate(resolve)); // a slow handler
    },
  );
  const outcome = await trainer.done;
  t.is(outcome.exitCode, 0);
  t.true(seen[0].length < maxLineChars + 100, `first line ${seen[0].length} characters`);
  t.regex(seen[0], /^x+ … \(line cut at 8192 characters\)$/);
  t.is(seen.length, 1 + 100_000);
  t.is(seen.at(-1), '100000');
  t.deepEqual(seen.slice(1, 4), ['1', '2', '3']);
  // Paused past 256 waiting events: the backlog stays at the pause threshold, never the whole flood.
  t.true(trainer.events.maxBacklog < 1_000, `largest backlog ${trainer.events.maxBacklog}`);
});
