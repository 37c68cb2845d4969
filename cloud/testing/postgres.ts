// Test helper: a PostgreSQL server of its own in a temp dir, on a free port of 127.0.0.1, with trust
// authentication for the `postgres` role (about a second to start). initdb refuses to run as root, so
// as root initdb and pg_ctl run as the `postgres` user (runuser), which owns the dir; as anyone else
// they run as that user. The programs come from the Debian package postgresql (initdb and pg_ctl on
// PATH, or /usr/lib/postgresql/<version>/bin); without them start fails, naming the package.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** The temp dir: data/, the log and the Unix socket. */
  dir: string;
  /** The server's log so far (for a test's failure message). */
  log(): string;
  /** pg_ctl stop -m fast, then the dir is removed. */
  stop(): Promise<void>;
}

/** The folder holding initdb and pg_ctl: PATH first, then Debian's versioned folder (newest). */
function binDir(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian) ? readdirSync(debian).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(debian, v, 'bin', 'initdb'))) return join(debian, v, 'bin');
  throw new Error('PostgreSQL tests need initdb and pg_ctl: install the Debian package postgresql (.ci/apt-packages.txt)');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs a PostgreSQL program, as the postgres user when we are root. */
function asOwner(program: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
}

export async function startPostgres(settings: Record<string, string> = {}): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'postgres-'));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const pgCtl = (args: string[]) => asOwner(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  let running = false;
  // Should the test process end without stop(), the server ends with it.
  const stopNow = () => {
    if (running) {
      const [cmd, args] = pgCtl(['stop', '-m', 'immediate']);
      try {
        execFileSync(cmd, args, { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);
  try {
    // No fsync at initdb: a test cluster is thrown away; the server itself keeps fsync on.
    const [initCmd, initArgs] = asOwner(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await run(initCmd, initArgs);
    const port = await freePort();
    const options = [
      `-p ${port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=${dir}`,
      ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
    ];
    const [startCmd, startArgs] = pgCtl(['start', '-w', '-t', '60', '-l', logFile, '-o', options.join(' ')]);
    await run(startCmd, startArgs);
    running = true;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      port,
      dir,
      log,
      stop: async () => {
        if (running) {
          const [cmd, args] = pgCtl(['stop', '-m', 'fast', '-w']);
          await run(cmd, args);
          running = false;
        }
        process.removeListener('exit', stopNow);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    const why = `${(err as Error).message}\n${log()}`;
    process.removeListener('exit', stopNow);
    stopNow();
    throw new Error(`PostgreSQL did not start: ${why}`, { cause: err });
  }
}
