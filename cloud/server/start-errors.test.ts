// What an operator reads from platform-cloud itself (cloud/store/OPERATIONS.md). When it cannot do what
// it was asked: one line naming the cause and a hint to --help, not an uncaught exception's stack nor
// the whole usage text (a systemd unit that restarts would print either on every attempt). In --help:
// where the settings that are environment variables, not flags, are described.
import test from 'ava';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';

const main = fileURLToPath(new URL('main.ts', import.meta.url));
const run = promisify(execFile);

/** Runs platform-cloud with args on a fresh data dir; resolves with its exit code and stderr. */
async function platformCloud(args: string[]): Promise<{ code: number; stderr: string }> {
  const dataDir = tempDataDir();
  try {
    // PLATFORM_QUERY_PG_PORT=0: the PostgreSQL endpoint takes any free port, not 5432.
    await run(process.execPath, ['--import', 'tsx', main, ...args, '--data-dir', dataDir], {
      env: { ...process.env, PLATFORM_QUERY_PG_PORT: '0', PLATFORM_BACKEND_STORE_URI: '', PLATFORM_ARTIFACTS_DESTINATION: '' },
      timeout: 120_000,
    });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  } finally {
    removeDataDir(dataDir);
  }
}

const stackLine = /^\s+at /m;
const usage = /Usage: platform-cloud/;

test('serve on a busy port exits 1 with one line naming the address, no stack and no usage text', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const port = (holder.address() as { port: number }).port;
  const { code, stderr } = await platformCloud(['serve', '--port', String(port), '--web-port', '0']);
  t.is(code, 1);
  t.regex(stderr, new RegExp(`serve could not start: .*EADDRINUSE.*127\\.0\\.0\\.1:${port}`));
  t.regex(stderr, /\(add --help for the usage\)/);
  t.notRegex(stderr, stackLine);
  t.notRegex(stderr, usage);
});

test('a failed admin command says why and hints at --help instead of printing the usage', async (t) => {
  const { code, stderr } = await platformCloud(['key', 'revoke', 'no-such-key']);
  t.is(code, 1);
  t.regex(stderr, /key\.revoke failed: API key no-such-key does not exist/);
  t.regex(stderr, /\(add --help for the usage\)/);
  t.notRegex(stderr, usage);
});

test('serve --help and worker --help say that most settings are environment variables and where they are described', async (t) => {
  for (const command of ['serve', 'worker']) {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', main, command, '--help']);
    t.regex(stdout, /Settings from the environment \(PLATFORM_QUERY_\*/, command);
    t.regex(stdout, /cloud\/README\.md/, command);
    t.regex(stdout, /cloud\/store\/OPERATIONS\.md/, command);
  }
});
