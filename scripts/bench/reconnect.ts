// npm run bench:reconnect — how soon an online machine gets a config change after a cloud outage (issue
// 29, item 3; SPEC: within 15 s of the cloud serving again), from the built programs. Each round kills
// platform-cloud (SIGKILL), keeps it down for OUTAGE_S (long enough for the config watch's waits to reach
// their cap), starts it again on the same port and data dir, saves a change (a new sensor) as soon as it
// serves, and times until the new sensor answers on the machine. The runtime's other calls (log shipping,
// status reports) reach the cloud too and wake the config watch (core/online/reconnect.ts), as on a real
// machine. BENCH_ROUNDS (default 5) and BENCH_OUTAGE_S (default 25) shrink or grow the run.
import { credentials } from '@grpc/grpc-js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { call as cloudCall, partClients } from '../../cloud/parts/testing/part-clients.js';
import { SensorServiceClient } from '../../gen/platform/component/sensor/v1/sensor.js';

const SERVER = fileURLToPath(new URL('../../core/server/main.js', import.meta.url));
const CLOUD = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 5;
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S) || 25;
const SPEC_MS = 15_000;

interface Started {
  child: ChildProcess;
  match: string;
  /** Everything the program printed so far. */
  output(): string;
}

function start(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<Started> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  let resolved = false;
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = resolved ? null : ready.exec(text);
      if (m) {
        resolved = true;
        resolve({ child, match: m[1], output: () => text });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

const stopped = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill(signal)),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sensor = (name: string) => ({ name, api: 'core:component:sensor', model: 'fake' });

/** When (epoch ms) the runtime first logged `msg` at or after `since`. */
function loggedAt(output: string, msg: string, since: number): number | undefined {
  for (const line of output.split('\n')) {
    if (!line.includes(msg)) continue;
    try {
      const record = JSON.parse(line) as { msg?: string; time?: string };
      const at = record.time ? Date.parse(record.time) : NaN;
      if (record.msg === msg && at >= since) return at;
    } catch {
      // not a log line
    }
  }
  return undefined;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-reconnect-cloud-'));
  const onlineDir = mkdtempSync(join(tmpdir(), 'bench-reconnect-'));
  const serve = (port: string) => start([CLOUD, 'serve', '--data-dir', dataDir, '--port', port], /platform-cloud serving (\S+)/);
  let cloud = await serve('0');
  const address = cloud.match;
  const port = address.slice(address.lastIndexOf(':') + 1);
  const admin = async <T>(...args: string[]) => JSON.parse((await run(process.execPath, [CLOUD, ...args, '--data-dir', dataDir, '--json'])).stdout) as T;
  const org = await admin<{ id: string }>('org', 'create', 'bench');
  const machine = await admin<{ part_id: string; part_secret: string }>('machine', 'create', '--org', org.id, '--name', 'bench');
  const key = await admin<{ id: string; key: string }>('key', 'create', '--org', org.id, '--role', 'owner');
  const components = [sensor('base')];
  const update = async () => {
    const owner = await partClients(address, key);
    try {
      await cloudCall(owner.app.updateRobotPart.bind(owner.app), { id: machine.part_id, robotConfig: { components } }, owner.md);
    } finally {
      owner.close();
    }
  };
  await update();

  const credsFile = join(onlineDir, 'credentials.json');
  writeFileSync(
    credsFile,
    JSON.stringify({ cloud: { id: machine.part_id, secret: machine.part_secret, app_address: address }, network: { bind_address: 'localhost:0' } }),
  );
  const env = { ...process.env, PLATFORM_ONLINE_DIR: onlineDir, PLATFORM_FTDC_DIR: join(onlineDir, 'ftdc') };
  const runtime = await start([SERVER, '-config', credsFile], /platform-server serving on (\S+)/, env);
  const sensors = new SensorServiceClient(runtime.match, credentials.createInsecure());
  const answers = (name: string) => new Promise<boolean>((resolve) => sensors.getReadings({ name }, (err) => resolve(!err)));

  const times: number[] = [];
  const reconnects: number[] = [];
  const afterOther: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await stopped(cloud.child, 'SIGKILL');
      await sleep(OUTAGE_S * 1000);
      cloud = await serve(port);
      const back = performance.now();
      const backAt = Date.now();
      const name = `after-outage-${round}`;
      components.push(sensor(name));
      await update();
      while (!(await answers(name))) {
        if (performance.now() - back > 60_000) throw new Error(`round ${round}: ${name} not applied within 60 s`);
        await sleep(20);
      }
      times.push(performance.now() - back);
      // The config watch's reconnect, and the log shipper's first success (another call of this machine).
      const followed = loggedAt(runtime.output(), 'following config revisions from the cloud', backAt);
      const shipped = loggedAt(runtime.output(), 'log lines reach the cloud again', backAt);
      if (followed !== undefined) reconnects.push(followed - backAt);
      if (followed !== undefined && shipped !== undefined) afterOther.push(followed - shipped);
      console.log(
        `round ${round + 1}/${ROUNDS}: change applied ${(times.at(-1)! / 1000).toFixed(2)} s after the cloud served again; ` +
          `config watch back after ${followed === undefined ? '?' : ((followed - backAt) / 1000).toFixed(2)} s; ` +
          `log shipping back after ${shipped === undefined ? '?' : ((shipped - backAt) / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    sensors.close();
    await stopped(runtime.child, 'SIGTERM');
    await stopped(cloud.child, 'SIGTERM');
  }
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length ? { p50: s(sorted[Math.floor((sorted.length - 1) / 2)]), max: s(sorted.at(-1)!) } : {};
  };
  console.log(
    JSON.stringify({
      rounds: ROUNDS,
      outage_s: OUTAGE_S,
      change_applied_after_cloud_back: summary(times),
      config_watch_back_after_cloud_back: summary(reconnects),
      // Negative: the watch was back before the log shipper (its own timer came first).
      config_watch_back_after_log_shipping_back: summary(afterOther),
      spec_limit: s(SPEC_MS),
      within_spec: times.every((t) => t <= SPEC_MS),
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
