// The durable, bounded log queue: lines survive a restart until acknowledged, and past the cap the
// oldest are dropped and counted.
import test from 'ava';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_LINES, LogQueue, SEGMENT_LINES, type QueuedLine } from './log-queue.js';

const line = (i: number): QueuedLine => ({ t: i, l: 'info', n: 'platform.test', m: `line ${i}` });

test('queued lines are on disk once flushed, survive a restart, and go only when acknowledged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'log-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = new LogQueue(dir, 10_000);
  for (let i = 0; i < 5; i++) first.push(line(i));
  await first.flush();
  const batch = first.take(100);
  t.deepEqual(
    batch?.lines.map((l) => l.m),
    ['line 0', 'line 1', 'line 2', 'line 3', 'line 4'],
  );
  first.release(batch!.seqs); // shipping failed
  // A new process finds the same lines, in order.
  const second = new LogQueue(dir, 10_000);
  second.push(line(5));
  await second.flush();
  const again = second.take(100);
  t.deepEqual(
    again?.lines.map((l) => l.t),
    [0, 1, 2, 3, 4, 5],
  );
  await second.ack(again!.seqs);
  t.is(second.size, 0);
  t.deepEqual(
    readdirSync(dir).filter((n) => n.startsWith('seg-')),
    [],
  );
  t.is(new LogQueue(dir, 10_000).size, 0);
});

test('past the cap the oldest lines are dropped and the count is reported', async (t) => {
  t.is(DEFAULT_MAX_LINES, 100_000); // the documented cap (PLATFORM_LOG_QUEUE_MAX_LINES overrides it)
  const dir = mkdtempSync(join(tmpdir(), 'log-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const reports: number[] = [];
  const queue = new LogQueue(dir, SEGMENT_LINES * 2, (n) => reports.push(n));
  for (let i = 0; i < SEGMENT_LINES * 4; i++) queue.push(line(i));
  await queue.flush();
  await new Promise((r) => setImmediate(r));
  t.is(queue.size, SEGMENT_LINES * 2);
  t.deepEqual(reports, [SEGMENT_LINES * 2]);
  // The newest lines are the ones kept.
  const kept = queue.take(SEGMENT_LINES * 4)!;
  t.is(kept.lines[0].t, SEGMENT_LINES * 2);
  t.is(kept.lines[kept.lines.length - 1].t, SEGMENT_LINES * 4 - 1);
});
