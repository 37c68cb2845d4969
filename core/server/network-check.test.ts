// -network-check end to end against real local servers (the machine has no internet).
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

function networkCheck(config: unknown): Promise<{ code: number | null; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-netcheck-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(config));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, '-config', path, '-network-check'],
      { env: { ...process.env, PLATFORM_FTDC_DIR: join(dir, 'diagnostics.data') } },
      (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout }),
    );
  });
}

function listen(host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end());
    server.listen(0, host, () => resolve(server));
  });
}

const line = (stdout: string, check: string) => stdout.split('\n').find((l) => l.includes(check)) ?? '';

test('all checks pass: a free bind address, and a cloud address that resolves and accepts connections', async (t) => {
  const cloud = await listen();
  t.teardown(() => cloud.close());
  const port = (cloud.address() as AddressInfo).port;
  const { code, stdout } = await networkCheck({
    network: { bind_address: '127.0.0.1:0' },
    cloud: { id: 'p', secret: 's', app_address: `http://localhost:${port}` },
  });
  t.is(code, 0, stdout);
  t.regex(line(stdout, 'bind 127.0.0.1:0'), /^ok .* ms {2}network\.bind_address: bound 127\.0\.0\.1:\d+$/);
  t.regex(line(stdout, 'dns localhost'), /^ok .* ms {2}cloud\.app_address: /);
  t.regex(line(stdout, `tcp localhost:${port}`), new RegExp(`^ok .* ms {2}cloud\\.app_address: connected to 127\\.0\\.0\\.1:${port}$`));
  t.regex(stdout, /network check passed\n$/);
});

test('an unresolvable cloud host and a bind address in use fail with exit status 1, each on its own line', async (t) => {
  const busy = await listen();
  t.teardown(() => busy.close());
  const bind = `127.0.0.1:${(busy.address() as AddressInfo).port}`;
  const { code, stdout } = await networkCheck({
    network: { bind_address: bind },
    cloud: { id: 'p', secret: 's', app_address: 'https://nonexistent.invalid:443' },
  });
  t.is(code, 1, stdout);
  t.regex(line(stdout, `bind ${bind}`), /^FAILED .*EADDRINUSE/);
  t.regex(line(stdout, 'dns nonexistent.invalid'), /^FAILED .* ms {2}cloud\.app_address: getaddrinfo ENOTFOUND nonexistent\.invalid$/);
  t.regex(line(stdout, 'tcp nonexistent.invalid:443'), /^FAILED .*ENOTFOUND/);
  t.regex(stdout, /network check FAILED\n$/);
});

test('without a cloud section the local checks run and the cloud checks are reported as skipped', async (t) => {
  const { code, stdout } = await networkCheck({ network: { bind_address: '127.0.0.1:0' } });
  t.is(code, 0, stdout);
  t.regex(stdout, /^ok +bind 127\.0\.0\.1:0 /m);
  t.regex(stdout, /^skipped cloud DNS and TCP checks: the config has no cloud section$/m);
  t.false(/^(ok|FAILED) +(dns|tcp) /m.test(stdout));
});
