import test from 'ava';
import { PassThrough } from 'node:stream';
import { LogSink } from './sink.js';

async function capture(deduplicate: boolean) {
  const out = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  out.on('data', (d: Buffer) =>
    d
      .toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => lines.push(JSON.parse(l))),
  );
  const sink = await LogSink.create({ destination: out, deduplicate });
  return { sink, lines };
}

test('a noisy message is written 3 times; its repeats are suppressed (the first as a notice) and counted when the sink closes', async (t) => {
  const { sink, lines } = await capture(true);
  for (let i = 0; i < 6; i++) sink.write({ level: 'warn', logger: 'platform.components.motor.m', message: 'stalled' });
  sink.write({ level: 'warn', logger: 'platform.components.motor.m', message: 'another message' });
  await sink.close();
  t.deepEqual(
    lines.map((l) => l.msg),
    [
      'stalled',
      'stalled',
      'stalled',
      'suppressing repeats of a noisy message (logged 3 times in 10 s): stalled',
      'another message',
      'stalled (repeated 3 more times in the last 10 s)',
    ],
  );
  t.is(lines[5].suppressed, 3);
});

test('disable_log_deduplication writes every line', async (t) => {
  const { sink, lines } = await capture(false);
  for (let i = 0; i < 6; i++) sink.write({ level: 'info', logger: 'x', message: 'same' });
  await sink.close();
  t.is(lines.filter((l) => l.msg === 'same').length, 6);
});

test('lines carry the logger name, level and fields', async (t) => {
  const { sink, lines } = await capture(true);
  const log = sink.logger('platform.kernel', () => 'info', { module_id: 'acme:weather' });
  log.debug('hidden');
  log.info('shown', { resource: 'a' });
  await sink.close();
  t.is(lines.length, 1);
  t.like(lines[0], { level: 30, logger: 'platform.kernel', msg: 'shown', module_id: 'acme:weather', resource: 'a' });
});
