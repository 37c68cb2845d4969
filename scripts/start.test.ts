// `npm start` (scripts/start.mjs) as a newcomer meets it, from the built programs in dist/: the whole
// stack comes up in a fresh PLATFORM_HOME, the printed key and addresses work, Ctrl-C (SIGINT to the
// whole process group, as a terminal sends it) stops everything, and a second start finds the same
// organization, machine, key and data. Every port is set to a free one (the settings of start.mjs), and a
// busy port stops the start with one line naming its setting, before anything runs or is stored.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call as cloudCall, partClients } from '../cloud/parts/testing/part-clients.js';
import { SensorServiceClient } from '../gen/platform/component/sensor/v1/sensor.js';
import { call, insecure } from '../core/server/testing/grpc.js';

const START = fileURLToPath(new URL('./start.mjs', import.meta.url));
const EXAMPLE = JSON.parse(readFileSync(fileURLToPath(new URL('../examples/fake.json', import.meta.url)), 'utf8')) as {
  components: { name: string }[];
};

/** One listener on a port the system picks; closed by the caller once every port it needs is picked. */
function listenAnywhere(): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ port, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

/**
 * `count` distinct free ports: all are held while the next is picked, since a port closed before the
 * next pick may be handed out again (two settings then named the same port, and the start refused it).
 */
async function freePorts(count: number): Promise<number[]> {
  const held: { port: number; close(): Promise<void> }[] = [];
  try {
    for (let i = 0; i < count; i++) held.push(await listenAnywhere());
    return held.map((h) => h.port);
  } finally {
    await Promise.all(held.map((h) => h.close()));
  }
}

/** True when nothing accepts connections on host:port. */
function closed(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs start.mjs in its own process group and resolves once it printed its summary. */
function startStack(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [START], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no summary within 240 s:\n${out}`)), 240_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl-C stops everything')) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before its summary:\n${out}`));
    });
  });
}

/** What a newcomer copies from the summary. */
function summary(out: string) {
  const key = /owner API key: id (\S+) {2}key (\S+)/.exec(out);
  const ids = /organization (\S+), machine (\S+), part (\S+)/.exec(out);
  const cloud = /platform-cloud {3}(\S+) {3}data in (\S+)/.exec(out);
  const server = /platform-server serving on (\S+)/.exec(out);
  if (!key || !ids || !cloud || !server) throw new Error(`the summary lacks the key, ids or addresses:\n${out}`);
  return { keyId: key[1], key: key[2], orgId: ids[1], machineId: ids[2], partId: ids[3], cloud: cloud[1], cloudData: cloud[2], server: server[1] };
}

/** Ctrl-C in a terminal: SIGINT to every process of the foreground group. */
async function ctrlC(started: Started): Promise<number | null> {
  process.kill(-started.child.pid!, 'SIGINT');
  return started.exited;
}

/** A fresh home and a free port for every setting of start.mjs. */
async function freshStack(t: { teardown(fn: () => void): void }) {
  const home = mkdtempSync(join(tmpdir(), 'platform-start-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const [cloud, cloudWeb, pg, server, serverWeb] = await freePorts(5);
  const ports = { cloud, cloudWeb, pg, server, serverWeb };
  const env = {
    ...process.env,
    PLATFORM_HOME: home,
    PLATFORM_START_CLOUD_PORT: String(ports.cloud),
    PLATFORM_START_CLOUD_WEB_PORT: String(ports.cloudWeb),
    PLATFORM_START_PG_PORT: String(ports.pg),
    PLATFORM_START_SERVER_PORT: String(ports.server),
    PLATFORM_START_SERVER_WEB_PORT: String(ports.serverWeb),
    // -ftdc would otherwise write into the real ~/.platform.
    PLATFORM_FTDC_DIR: join(home, 'diagnostics.data'),
  };
  return { home, ports, env };
}

/** Runs start.mjs to its end (a refused start ends by itself). */
function startRefused(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [START], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Holds a port, as another program would. */
function occupy(host: string, port: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

test.serial('a busy port stops npm start with one line naming its setting; nothing is stored, and a retry with the setting changed works', async (t) => {
  const { home, ports, env } = await freshStack(t);
  const settings = {
    cloud: 'PLATFORM_START_CLOUD_PORT',
    cloudWeb: 'PLATFORM_START_CLOUD_WEB_PORT',
    pg: 'PLATFORM_START_PG_PORT',
    server: 'PLATFORM_START_SERVER_PORT',
    serverWeb: 'PLATFORM_START_SERVER_WEB_PORT',
  } as const;
  for (const [key, setting] of Object.entries(settings) as [keyof typeof ports, string][]) {
    const release = await occupy(key === 'server' || key === 'serverWeb' ? 'localhost' : '127.0.0.1', ports[key]);
    const refused = await startRefused(env);
    await release();
    t.is(refused.code, 1, setting);
    const lines = refused.stderr.trim().split('\n');
    t.is(lines.length, 1, `one line: ${refused.stderr}`);
    t.regex(lines[0], new RegExp(`^npm start: port ${ports[key]} \\(.+\\) is in use: set ${setting} to a free port`));
    t.false(existsSync(join(home, 'start-stack.json')), 'nothing was created or stored');
    t.true(await closed('127.0.0.1', ports.cloud), 'no cloud was started');
  }
  t.regex((await startRefused({ ...env, PLATFORM_START_SERVER_PORT: 'eighty' })).stderr, /^npm start: PLATFORM_START_SERVER_PORT must be a port number/);

  // A first start stores the part's config; a retry with the machine's port set elsewhere serves there
  // (the machine's ports are this start's settings, never stored in the part's config).
  const first = await startStack(env);
  t.is(summary(first.output()).server.split(':').at(-1), String(ports.server));
  t.is(await ctrlC(first), 0);
  // Not one of the stack's other ports, which are free again now that the first start stopped.
  let moved = (await freePorts(1))[0];
  while (Object.values(ports).includes(moved)) moved = (await freePorts(1))[0];
  const second = await startStack({ ...env, PLATFORM_START_SERVER_PORT: String(moved) });
  const out = second.output();
  t.is(summary(out).server.split(':').at(-1), String(moved));
  t.regex(out, new RegExp(`control page: http://localhost:${ports.serverWeb}/`));
  t.regex(out, new RegExp(`data browser: http://127\\.0\\.0\\.1:${ports.cloudWeb}/`));
  t.regex(out, new RegExp(`psql "postgres(ql)?://[^"]+:${ports.pg}/`));
  t.is(await ctrlC(second), 0);
  t.true(await closed('localhost', moved));
});

test.serial(
  'npm start brings up the stack in a fresh home, its printed key and addresses work, Ctrl-C stops it, and a second start reuses everything',
  async (t) => {
    const { home, ports, env } = await freshStack(t);
    const cloudPort = ports.cloud;
    const running: Started[] = [];
    t.teardown(() => {
      for (const s of running) if (s.child.exitCode === null) process.kill(-s.child.pid!, 'SIGKILL');
    });

    const first = await startStack(env);
    running.push(first);
    const one = summary(first.output());
    t.is(one.cloud, `127.0.0.1:${cloudPort}`);
    t.is(one.cloudData, join(home, 'cloud'));
    // The printed grpcurl lines name the same addresses, key and part.
    const out = first.output();
    t.true(
      out.includes(`'{"entity":"${one.keyId}","credentials":{"type":"api-key","payload":"${one.key}"}}' ${one.cloud} platform.rpc.v1.AuthService/Authenticate`),
    );
    t.true(out.includes(`-d '{"id":"${one.partId}"}' ${one.cloud} platform.app.v1.AppService/GetRobotPart`));
    t.true(out.includes(`-d '{"name":"thermometer"}' ${one.server} platform.component.sensor.v1.SensorService/GetReadings`));

    // The key works, the part runs the example machine from its cloud config, and the runtime answers.
    const owner = await partClients(one.cloud, { id: one.keyId, key: one.key });
    const { part } = await cloudCall(owner.app.getRobotPart.bind(owner.app), { id: one.partId }, owner.md);
    owner.close();
    t.is(part?.machineId, one.machineId);
    t.is(part?.configRevision, 1);
    t.deepEqual(
      (part?.robotConfig?.components as { name: string }[]).map((c) => c.name),
      EXAMPLE.components.map((c) => c.name),
    );
    const sensors = new SensorServiceClient(one.server, insecure());
    const readings = ((await call(sensors, 'getReadings', { name: 'thermometer' })) as { readings: Record<string, unknown> }).readings;
    sensors.close();
    t.true(Object.keys(readings).length > 0);

    t.is(await ctrlC(first), 0);
    t.true(await closed('127.0.0.1', cloudPort), 'the cloud stopped');
    t.true(await closed('localhost', ports.server), 'the runtime stopped');

    const second = await startStack(env);
    running.push(second);
    const two = summary(second.output());
    t.deepEqual(two, one);
    t.regex(second.output(), /cached cloud config found/);
    const again = await partClients(two.cloud, { id: two.keyId, key: two.key });
    const after = await cloudCall(again.app.getRobotPart.bind(again.app), { id: two.partId }, again.md);
    t.is(after.part?.configRevision, 1, 'the example config is set only on the first start');
    // The first run's log lines are in the cloud (shipped then, or from the durable queue now).
    const deadline = Date.now() + 60_000;
    let firstRevision = false;
    while (!firstRevision && Date.now() < deadline) {
      const logs = await cloudCall(
        again.app.getRobotPartLogs.bind(again.app),
        { id: two.partId, levels: ['info'], filter: 'new config revision from the cloud', pageToken: '', limit: 10 },
        again.md,
      );
      firstRevision = logs.logs.some((l) => l.fields?.revision === 1);
      if (!firstRevision) await new Promise((r) => setTimeout(r, 250));
    }
    again.close();
    t.true(firstRevision);
    t.is(await ctrlC(second), 0);
  },
);
