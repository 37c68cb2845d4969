// The bench:isolation harness: one fresh platform-cloud (from dist/) per attack, three organizations, and
// the quiet organization's calls measured idle, then beside a harmless busy neighbour (the floor), then
// while the attack runs. The quiet organization measures from a process of its own (quiet-child.ts), so
// the attacker's client work in this process never counts as the cloud's delay.
//
// Each attack gets its own cloud because RSS does not come back after an attack: a cloud shared by all
// of them would charge one attack's inflation to the next. The cloud's RSS is sampled every 50 ms from
// /proc while the attack runs, so the peak printed is this attack's own.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../../cloud/admin/channel.js';
import { createCloudClient, type CloudClient } from '../../../cloud/client/cloud-client.js';

const main = fileURLToPath(new URL('../../../cloud/server/main.js', import.meta.url));
const sensor = 'rdk:component:sensor';

/** One organization of the bench: an owner key, a machine part, and a client signed in with the key. */
export interface Tenant {
  orgId: string;
  keyId: string;
  key: string;
  partId: string;
  partSecret: string;
  client: CloudClient;
}

/** What an attack may use: the running cloud's addresses and both organizations. */
export interface AttackContext {
  /** host:port of the cloud's gRPC port. */
  address: string;
  /** http://host:port/ of the cloud's web port (the data browser and its gRPC-Web forwarder). */
  webUrl: string;
  /** The PostgreSQL endpoint's port on 127.0.0.1. */
  pgPort: number;
  dataDir: string;
  pid: number;
  /** The attacking organization. */
  attacker: Tenant;
  /** The organization whose calls are measured. */
  quiet: Tenant;
  admin<T = Record<string, string>>(action: string, args: Record<string, unknown>): Promise<T>;
}

/** Stops an attack and returns a one-line summary of what it did (counts, outcomes). */
export type StopAttack = () => Promise<string>;

export interface Attack {
  /** Short name, selectable with BENCH_ATTACKS=name,name. */
  name: string;
  /** Where the attack was found, for example `issue 27 #2`. */
  finding: string;
  /** One line: what the attacker does. */
  describe: string;
  /** Settings for the cloud under this attack (env variables), for example a short timeout. */
  cloudEnv?: Record<string, string>;
  /** Starts the attack; resolves once it is under way. */
  start(ctx: AttackContext): Promise<StopAttack>;
}

export interface Samples {
  filter: number[];
  upload: number[];
}

export interface AttackResult {
  attack: Attack;
  idle: Samples;
  /** The quiet organization's calls while a third organization makes the same calls back to back: the floor of one busy, harmless neighbour. */
  floor: Samples;
  loaded: Samples;
  summary: string;
  /** Peak RSS while the attack ran, in MiB. */
  peakRssMb: number;
  /** RSS before the attack started, in MiB. */
  baseRssMb: number;
  /** The cloud died during the attack (for example OOM-killed). */
  killed: boolean;
  /** CPU time the cloud used from the attack's start to its end (user and system, all threads), in ms: a figure the machine's other load barely moves. */
  cloudCpuMs: number;
  /** Wall time from the attack's start to its end, in ms. */
  attackMs: number;
}

export const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]);

/** User and system CPU time of a process so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN; // the process is gone
  }
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0; // the process is gone
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One round of the quiet organization's two calls: a 1-row read and a 10-point upload. */
async function callsOnce(t: Tenant): Promise<void> {
  await t.client.dataClient.tabularDataByFilter({ organizationIds: [t.orgId] }, { limit: 1 });
  const now = Date.now();
  await t.client.dataClient.tabularDataCaptureUpload(
    Array.from({ length: 10 }, (_, k) => ({ readings: { v: k } })),
    t.partId,
    sensor,
    'thermo',
    'Readings',
    Array.from({ length: 10 }, (_, k) => [new Date(now + k), new Date(now + k + 1)] as [Date, Date]),
  );
}

/** A harmless neighbour: the same two calls back to back until stopped (the floor's load). */
function neighbourLoad(t: Tenant): () => Promise<number> {
  let stop = false;
  let rounds = 0;
  const loop = (async () => {
    while (!stop) {
      await callsOnce(t);
      rounds++;
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return rounds;
  };
}

/** The quiet organization's measurer, in its own process (quiet-child.ts). */
interface Measurer {
  measure(samples: number, deadlineMs?: number): Promise<Samples>;
  close(): void;
}

async function startMeasurer(address: string, quiet: Tenant): Promise<Measurer> {
  const child = fork(fileURLToPath(new URL('./quiet-child.js', import.meta.url)), [address, quiet.keyId, quiet.key, quiet.orgId, quiet.partId], {
    stdio: 'inherit',
  });
  await once(child, 'message');
  return {
    async measure(samples, deadlineMs = 24 * 3600_000) {
      child.send({ samples, deadlineMs });
      const [reply] = (await once(child, 'message')) as [Samples | { error: string }];
      if ('error' in reply) throw new Error(`the quiet organization's call failed: ${reply.error}`);
      return reply;
    },
    close: () => child.send('stop'),
  };
}

interface RunningCloud {
  child: ChildProcess;
  address: string;
  webUrl: string;
  exited: Promise<unknown>;
}

async function spawnCloud(dataDir: string, pgPort: number, env: Record<string, string>): Promise<RunningCloud> {
  const child = spawn(
    process.execPath,
    [...(process.env.BENCH_CLOUD_NODE_ARGS?.split(' ').filter(Boolean) ?? []), main, 'serve', '--data-dir', dataDir, '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, PLATFORM_QUERY_PG_PORT: String(pgPort), ...env },
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { address, webUrl } = await new Promise<{ address: string; webUrl: string }>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const serving = /platform-cloud serving (\S+)/.exec(out);
      const web = /platform-cloud web page on (\S+)/.exec(out);
      if (serving && web) {
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining the log so the cloud never blocks on a full pipe
        resolve({ address: serving[1], webUrl: web[1] });
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`platform-cloud exited with ${code} before serving`)));
  });
  return { child, address, webUrl, exited };
}

async function tenant(dataDir: string, address: string, name: string): Promise<Tenant> {
  const admin = async <T = Record<string, string>>(action: string, args: Record<string, unknown>) =>
    (await callAdminChannel(dataDir, action, args))!.result as T;
  const orgId = (await admin('org.create', { name })).id;
  const key = await admin('key.create', { org: orgId, role: 'owner' });
  const machine = await admin('machine.create', { org: orgId, name: `${name}-rover` });
  const client = createCloudClient({ serviceHost: `http://${address}`, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  return { orgId, keyId: key.id, key: key.key, partId: machine.part_id, partSecret: machine.part_secret, client };
}

/** Runs one attack against a fresh cloud and measures the quiet organization idle and under it. */
export async function runAttack(attack: Attack, samples: number, settleMs = 1000): Promise<AttackResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-isolation-'));
  const pgPort = await freePort();
  const cloud = await spawnCloud(dataDir, pgPort, attack.cloudEnv ?? {});
  const pid = cloud.child.pid!;
  let killed = false;
  void cloud.exited.then(() => (killed = true));
  const attacker = await tenant(dataDir, cloud.address, 'attacker');
  const quiet = await tenant(dataDir, cloud.address, 'quiet');
  const neighbour = await tenant(dataDir, cloud.address, 'neighbour');
  const measurer = await startMeasurer(cloud.address, quiet);
  try {
    await measurer.measure(Math.min(50, samples)); // warm-up: tokens, prepared statements, JIT
    const idle = await measurer.measure(samples);
    const stopNeighbour = neighbourLoad(neighbour);
    const floor = await measurer.measure(samples);
    await stopNeighbour();
    const baseRssMb = rssMb(pid);
    let peakRssMb = baseRssMb;
    const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, rssMb(pid))), 50);
    const ctx: AttackContext = {
      address: cloud.address,
      webUrl: cloud.webUrl,
      pgPort,
      dataDir,
      pid,
      attacker,
      quiet,
      admin: async (action, args) => (await callAdminChannel(dataDir, action, args))!.result as never,
    };
    const cpuStart = cpuMs(pid);
    const wallStart = Date.now();
    const stop = await attack.start(ctx);
    await new Promise((r) => setTimeout(r, settleMs));
    // A killed cloud answers nothing: bound the loaded measurement so the bench still reports it.
    let loaded: Samples = { filter: [], upload: [] };
    try {
      loaded = await measurer.measure(samples, 120_000);
    } catch (err) {
      if (!killed) throw err;
    }
    const summary = await stop();
    const cloudCpuMs = cpuMs(pid) - cpuStart;
    const attackMs = Date.now() - wallStart;
    clearInterval(sampler);
    peakRssMb = Math.max(peakRssMb, rssMb(pid));
    return { attack, idle, floor, loaded, summary, peakRssMb, baseRssMb, killed, cloudCpuMs, attackMs };
  } finally {
    measurer.close();
    attacker.client.close();
    quiet.client.close();
    neighbour.client.close();
    if (!killed) {
      cloud.child.kill('SIGTERM');
      await cloud.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}
