// Test helper: a one-node Ceph cluster with the S3 gateway, radosgw, on 127.0.0.1 in a temp dir: one
// monitor, one OSD on memstore (objects in RAM, up to memstoreBytes), one radosgw, no authentication
// inside the cluster and one S3 user. Starts in about 10-15 s; stop() ends the three daemons and
// removes the dir. The Debian packages radosgw, ceph-mon and ceph-osd provide the programs (listed in
// .ci/apt-packages.txt); without them start fails, naming the packages, so a test never passes without
// the service.
//
// With `auth none`, a client must still be allowed to pick crc mode (`ms mon client mode = crc secure`),
// or radosgw keeps retrying its authentication with the monitor.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { S3Service } from './s3rver.js';

const run = promisify(execFile);

const programs = ['monmaptool', 'ceph-mon', 'ceph-osd', 'ceph', 'radosgw', 'radosgw-admin'];
const memstoreBytes = 1024 * 1024 * 1024;

/** The first of the programs that is not on PATH, if any. */
function missingProgram(): string | undefined {
  const path = (process.env.PATH ?? '').split(':');
  return programs.find((p) => !path.some((dir) => existsSync(join(dir, p))));
}

/** A port that was free a moment ago (the daemons take their ports themselves). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function config(dir: string, fsid: string, monAddr: string): string {
  return `[global]
fsid = ${fsid}
mon host = ${monAddr}
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
keyring = /dev/null
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
mon data = ${dir}/mon
osd data = ${dir}/osd
osd objectstore = memstore
memstore device bytes = ${memstoreBytes}
rgw data = ${dir}/rgw
`;
}

export async function startRadosgw(): Promise<S3Service> {
  const missing = missingProgram();
  if (missing) {
    throw new Error(
      `radosgw tests need '${missing}': install the Debian packages radosgw, ceph-mon and ceph-osd (.ci/apt-packages.txt; as root: node scripts/setup.mjs --system)`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'radosgw-'));
  for (const sub of ['mon', 'osd', 'run', 'log', 'rgw']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'ceph.conf');
  const daemons: ChildProcess[] = [];
  let stopping = false;
  let failure: Error | undefined;
  const killAll = () => {
    for (const d of daemons) if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // Should the test process end without stop(), its daemons and files go with it.
  process.once('exit', killAll);
  const daemon = (program: string, args: string[]) => {
    const child = spawn(program, ['-f', '-c', conf, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once('exit', (code, signal) => {
      if (!stopping) failure ??= new Error(`${program} exited (${signal ?? code}) while the cluster was starting or running: ${err}`);
    });
    daemons.push(child);
  };
  const logs = () => {
    const read = (name: string) => (existsSync(join(dir, 'log', name)) ? readFileSync(join(dir, 'log', name), 'utf8').slice(-3000) : '');
    return ['mon.a.log', 'osd.0.log', 'client.rgw.log'].map((n) => `--- ${n}\n${read(n)}`).join('\n');
  };
  const stop = async () => {
    stopping = true;
    // radosgw first, then the OSD, then the monitor: each still has the cluster it talks to.
    for (const d of [...daemons].reverse()) {
      if (d.exitCode !== null || d.signalCode !== null) continue;
      const exited = new Promise((resolve) => d.once('exit', resolve));
      d.kill('SIGTERM');
      if ((await Promise.race([exited, sleep(10_000, 'timeout', { ref: false })])) === 'timeout') {
        d.kill('SIGKILL');
        await exited;
      }
    }
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const fsid = randomUUID();
    const monAddr = `127.0.0.1:${await freePort()}`;
    writeFileSync(conf, config(dir, fsid, monAddr));
    const ceph = (args: string[]) => run('ceph', ['-c', conf, '--connect-timeout', '60', ...args], { timeout: 90_000 });
    await run('monmaptool', ['--create', '--fsid', fsid, '--add', 'a', monAddr, join(dir, 'monmap')]);
    await run('ceph-mon', ['--mkfs', '-i', 'a', '-c', conf, '--monmap', join(dir, 'monmap')]);
    daemon('ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    const { stdout: osdId } = await ceph(['osd', 'new', osdUuid]);
    await run('ceph-osd', ['-c', conf, '-i', osdId.trim(), '--mkfs', '--osd-uuid', osdUuid]);
    daemon('ceph-osd', ['-i', osdId.trim()]);
    const port = await freePort();
    daemon('radosgw', ['-n', 'client.rgw', '--rgw-frontends', `beast endpoint=127.0.0.1:${port}`]);
    const endpoint = `http://127.0.0.1:${port}`;
    // radosgw listens once it has made its pools on the OSD; until then connections are refused.
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (failure) throw failure;
      const status = await fetch(endpoint).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > deadline) throw new Error(`radosgw did not answer on ${endpoint} within 120 s`);
      await sleep(250);
    }
    const credentials = { accessKeyId: `TEST${randomUUID().slice(0, 8).toUpperCase()}`, secretAccessKey: randomUUID() };
    await run('radosgw-admin', [
      '-c',
      conf,
      'user',
      'create',
      '--uid=test',
      '--display-name=test',
      `--access-key=${credentials.accessKeyId}`,
      `--secret=${credentials.secretAccessKey}`,
    ]);
    return { endpoint, credentials, output: logs, stop };
  } catch (err) {
    const why = `${(err as Error).message}\n${logs()}`;
    await stop();
    throw new Error(`the one-node Ceph cluster did not start: ${why}`, { cause: err });
  }
}
