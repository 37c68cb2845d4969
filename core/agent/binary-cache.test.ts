// The download cache: resumable HTTP downloads, sha256 refusal, change detection for custom URLs,
// atomic symlink installation.
import test from 'ava';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Logger } from './agent-log.js';
import { BinaryCache } from './binary-cache.js';
import { ChecksumMismatchError, DownloadError } from './errors.js';

const logger = new Logger('silent');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function sandbox() {
  const dir = mkdtempSync(join(tmpdir(), 'platform-agent-cache-'));
  return { dir, cache: new BinaryCache(join(dir, 'cache'), join(dir, 'bin'), logger) };
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

test('an interrupted download resumes with a Range request and is verified', async (t) => {
  const body = Buffer.from(`#!/bin/sh\necho ${'x'.repeat(200_000)}\n`);
  const ranges: (string | undefined)[] = [];
  let first = true;
  const server = await serve((req, res) => {
    ranges.push(req.headers.range);
    if (first) {
      first = false;
      res.writeHead(200, { 'content-length': body.length, etag: '"v1"' });
      res.write(body.subarray(0, 100_000), () => res.destroy());
      return;
    }
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    t.is(req.headers['if-range'], '"v1"');
    const from = Number(m![1]);
    res.writeHead(206, { 'content-length': body.length - from, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}`, etag: '"v1"' });
    res.end(body.subarray(from));
  });
  t.teardown(server.close);
  const { cache } = sandbox();
  const source = { subsystem: 'platform-server' as const, version: '1.2.3', location: { kind: 'http' as const, url: `${server.url}/bin` }, sha256: sha(body) };
  t.is((await t.throwsAsync(cache.fetch(source), { instanceOf: DownloadError }))?.errorCode, 'CORE_ERR_AGENT_DOWNLOAD');
  const file = await cache.fetch(source);
  // The resume point is what arrived before the connection broke (at most the 100000 bytes sent).
  t.is(ranges.length, 2);
  t.is(ranges[0], undefined);
  const resumedAt = Number(/^bytes=(\d+)-$/.exec(ranges[1] ?? '')?.[1]);
  t.true(resumedAt > 0 && resumedAt <= 100_000, String(ranges[1]));
  t.deepEqual(readFileSync(file), body);
  t.is(statSync(file).mode & 0o111, 0o111, 'marked executable');
  t.is(await cache.fetch(source), file, 'a verified file is reused without downloading');
  t.is(ranges.length, 2);
});

test('a sha256 mismatch is refused and nothing is installed', async (t) => {
  const server = await serve((_req, res) => res.end('#!/bin/sh\necho tampered\n'));
  t.teardown(server.close);
  const { dir, cache } = sandbox();
  const source = {
    subsystem: 'platform-server' as const,
    version: '1.0.0',
    location: { kind: 'http' as const, url: `${server.url}/x` },
    sha256: sha('the real one'),
  };
  const err = await t.throwsAsync(cache.fetch(source), { instanceOf: ChecksumMismatchError });
  t.is(err?.errorCode, 'CORE_ERR_AGENT_CHECKSUM');
  t.is(err!.expected, sha('the real one'));
  t.is(err!.actual, sha('#!/bin/sh\necho tampered\n'));
  t.deepEqual(
    readdirSync(join(dir, 'cache')).filter((f) => !f.endsWith('.json')),
    [],
    'no binary and no partial file kept',
  );
  t.is(await cache.installed('platform-server'), undefined);
});

test('a custom URL is re-checked: unchanged content is not downloaded again, changed content is', async (t) => {
  let content = 'one';
  let full = 0;
  const server = await serve((req, res) => {
    const etag = `"${sha(content)}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304).end();
      return;
    }
    full++;
    res.writeHead(200, { etag }).end(`#!/bin/sh\n# ${content}\n`);
  });
  t.teardown(server.close);
  const { cache } = sandbox();
  const url = `${server.url}/custom`;
  const source = { subsystem: 'platform-server' as const, version: url, location: { kind: 'http' as const, url } };
  const a = await cache.fetch(source);
  t.is(await cache.fetch(source), a);
  t.is(full, 1);
  content = 'two';
  const b = await cache.fetch(source);
  t.not(b, a);
  t.is(full, 2);
  t.regex(readFileSync(b, 'utf8'), /# two/);
});

test('HTTP errors name the URL and status', async (t) => {
  const server = await serve((_req, res) => res.writeHead(404).end());
  t.teardown(server.close);
  const { cache } = sandbox();
  const err = await t.throwsAsync(cache.fetch({ subsystem: 'agent', version: 'x', location: { kind: 'http', url: `${server.url}/missing` } }));
  t.regex(err!.message, /agent: cannot download http:\/\/127\.0\.0\.1:\d+\/missing: HTTP 404/);
});

test('install re-points the symlink atomically and reports whether it changed', async (t) => {
  const { dir, cache } = sandbox();
  const src = join(dir, 'runtime.sh');
  writeFileSync(src, '#!/bin/sh\necho a\n');
  const file = await cache.fetch({ subsystem: 'platform-server', version: 'file', location: { kind: 'file', path: src } });
  t.true(await cache.install('platform-server', file));
  t.false(await cache.install('platform-server', file));
  t.is(readlinkSync(join(dir, 'bin', 'platform-server')), file);
  writeFileSync(src, '#!/bin/sh\necho b\n');
  const next = await cache.fetch({ subsystem: 'platform-server', version: 'file', location: { kind: 'file', path: src } });
  t.not(next, file);
  t.true(await cache.install('platform-server', next));
  t.is(await cache.installed('platform-server'), next);
  t.deepEqual(readdirSync(join(dir, 'bin')), ['platform-server'], 'no temporary link left behind');
  writeFileSync(src, '#!/bin/sh\necho c\n');
  const third = await cache.fetch({ subsystem: 'platform-server', version: 'file', location: { kind: 'file', path: src } });
  await cache.install('platform-server', third);
  const kept = readdirSync(join(dir, 'cache'))
    .filter((f) => f.startsWith('platform-server-'))
    .map((f) => join(dir, 'cache', f))
    .sort();
  t.deepEqual(kept, [next, third].sort(), 'the cache keeps the installed binary and the previous one');
});

test('a missing file:// binary is a DownloadError naming it', async (t) => {
  const { cache } = sandbox();
  const err = await t.throwsAsync(cache.fetch({ subsystem: 'platform-server', version: 'x', location: { kind: 'file', path: '/nonexistent/bin' } }), {
    instanceOf: DownloadError,
  });
  t.is(err?.errorCode, 'CORE_ERR_AGENT_DOWNLOAD');
  t.regex(err!.message, /file:\/\/\/nonexistent\/bin/);
});
