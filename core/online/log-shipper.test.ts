// Shipping from the queue: lines the sink writes reach the cloud in order once it takes them, and the
// number of lines dropped past the cap is logged and shipped like any other line.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { LogEntry, LogRequest } from '../../gen/platform/app/v1/robot_part.js';
import { LogSink } from '../logging/sink.js';
import type { CloudLink } from '../cloud-link/cloud-link.js';
import { LogQueue, SEGMENT_LINES } from './log-queue.js';
import { LogShipper, queuedLine } from './log-shipper.js';

test('while the cloud refuses, lines wait on disk; past the cap the oldest go, and the dropped count is shipped', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'log-shipper-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const destination = new PassThrough();
  let written = '';
  destination.on('data', (d: Buffer) => (written += d.toString()));
  const sink = await LogSink.create({ destination, deduplicate: false });
  const log = sink.logger('platform.online', () => 'info');
  const queue = new LogQueue(dir, SEGMENT_LINES * 2, (dropped) => log.warn(`dropped ${dropped} log lines: the local log queue was full`, { dropped }));
  sink.tap((record, time) => queue.push(queuedLine(record, time)));
  let cloudUp = false;
  const received: LogEntry[] = [];
  const link = {
    partId: 'p1',
    robot: { log: () => undefined },
    unary: async (_fn: unknown, req: LogRequest) => {
      if (!cloudUp) throw new Error('14 UNAVAILABLE: connection refused');
      received.push(...req.logs);
      return {};
    },
  } as unknown as CloudLink;
  const shipper = new LogShipper(link, queue, log);
  shipper.start();
  t.teardown(() => shipper.stop());
  const lines = sink.logger('platform.components.sensor.s', () => 'info');
  for (let i = 0; i < SEGMENT_LINES * 4; i++) lines.info(`line ${i}`, { i });
  await queue.flush();
  await new Promise((r) => setTimeout(r, 50));
  cloudUp = true;
  const deadline = Date.now() + 60_000;
  const notices = () => received.filter((e) => /^dropped \d+ log lines/.test(e.message));
  const dropped = () => notices().reduce((n, e) => n + Number(e.fields?.dropped), 0);
  const data = () => received.filter((e) => e.loggerName === 'platform.components.sensor.s').length;
  while (data() + dropped() < SEGMENT_LINES * 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.true(notices().length > 0);
  // The runtime's own log says so too, with the count.
  const logged = written
    .split('\n')
    .filter((l) => l.includes('dropped ') && l.includes('log lines'))
    .map((l) => JSON.parse(l) as { level: number; dropped: number; logger: string });
  t.true(logged.length > 0);
  t.true(logged.every((l) => l.level === 40 && l.logger === 'platform.online' && l.dropped > 0));
  t.is(
    logged.reduce((n, l) => n + l.dropped, 0),
    dropped(),
  );
  t.true(notices().every((e) => e.level === 'warn'));
  t.true(dropped() >= SEGMENT_LINES);
  // What was kept arrives in order, and the newest line is among it.
  const shipped = received.filter((e) => e.loggerName === 'platform.components.sensor.s').map((e) => Number(e.fields?.i));
  t.deepEqual(
    shipped,
    [...shipped].sort((a, b) => a - b),
  );
  t.is(shipped[shipped.length - 1], SEGMENT_LINES * 4 - 1);
  t.is(shipped.length + dropped(), SEGMENT_LINES * 4);
  t.true(shipped.length <= SEGMENT_LINES * 2);
});
