#!/usr/bin/env node
// `npm start`: the whole stack on embedded defaults. A local platform-cloud (data under
// ~/.platform/cloud), an organization, a machine and an owner key (created on first start, reused
// after), and platform-server online against that cloud, running the example machine from the part's
// cloud config. Prints how to reach each program. Ctrl-C stops everything.
//
// Environment: PLATFORM_HOME (default ~/.platform) moves every file; every port has a setting (PORTS
// below: PLATFORM_START_CLOUD_PORT 8081, PLATFORM_START_CLOUD_WEB_PORT 8082, PLATFORM_START_PG_PORT 5432,
// PLATFORM_START_SERVER_PORT 8080, PLATFORM_START_SERVER_WEB_PORT 8090; 0 = any free port). A busy
// port stops the start before anything runs or is stored, with one line naming its setting. The
// machine's ports go in its local credentials file (which wins over the cloud config's network), never
// in the part's cloud config, so a retry with another setting works. `npm start -- <config.json>` runs a
// local config file offline instead, as before.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const serverMain = join(root, 'dist', 'core', 'server', 'main.js');
const cloudMain = join(root, 'dist', 'cloud', 'server', 'main.js');
const home = process.env.PLATFORM_HOME || join(homedir(), '.platform');
const cloudDir = join(home, 'cloud');
const stackFile = join(home, 'start-stack.json');
const credentialsFile = join(home, 'start-credentials.json');
const run = promisify(execFile);

/** Every port the stack listens on: its setting, what it is, where it is bound, its default. */
const PORTS = {
  cloud: { setting: 'PLATFORM_START_CLOUD_PORT', what: "platform-cloud's gRPC port", host: '127.0.0.1', byDefault: 8081 },
  cloudWeb: { setting: 'PLATFORM_START_CLOUD_WEB_PORT', what: "platform-cloud's data browser", host: '127.0.0.1', byDefault: undefined },
  pg: {
    setting: 'PLATFORM_START_PG_PORT',
    what: "platform-cloud's PostgreSQL endpoint",
    host: process.env.PLATFORM_QUERY_PG_HOST || '127.0.0.1',
    byDefault: 5432,
  },
  server: { setting: 'PLATFORM_START_SERVER_PORT', what: "platform-server's gRPC port", host: 'localhost', byDefault: 8080 },
  serverWeb: { setting: 'PLATFORM_START_SERVER_WEB_PORT', what: "platform-server's control page", host: 'localhost', byDefault: 8090 },
};

/** A refusal the user can act on: printed as one line, without a stack. */
class StartError extends Error {}

/** The port of each setting (the data browser defaults to the cloud's port + 1, as platform-cloud does). */
function portSettings() {
  const ports = {};
  for (const [key, port] of Object.entries(PORTS)) {
    // PLATFORM_QUERY_PG_PORT, the cloud's own setting, still counts when the start setting is absent.
    const raw = process.env[port.setting] || (key === 'pg' ? process.env.PLATFORM_QUERY_PG_PORT : undefined);
    const value = raw === undefined || raw === '' ? (port.byDefault ?? (ports.cloud === 0 ? 0 : ports.cloud + 1)) : Number(raw);
    if (!Number.isInteger(value) || value < 0 || value > 65535) {
      throw new StartError(`${port.setting} must be a port number from 0 to 65535 (0 = any free port), got "${raw}"`);
    }
    ports[key] = value;
  }
  return ports;
}

/** Resolves with undefined when host:port can be bound now, or with the reason it cannot. */
function bindable(host, port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err) => resolve(err.code === 'EADDRINUSE' ? 'is in use' : `cannot be bound (${err.code ?? err.message})`));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** Every port is checked before anything starts: a busy one is one line naming its setting. */
async function checkPorts(ports) {
  const seen = new Map();
  for (const [key, port] of Object.entries(PORTS)) {
    const value = ports[key];
    if (value === 0) continue;
    if (seen.has(value)) throw new StartError(`${port.setting} and ${seen.get(value)} are both ${value}: give each port of the stack its own number`);
    seen.set(value, port.setting);
    const problem = await bindable(port.host, value);
    if (problem) {
      throw new StartError(`port ${value} (${port.what}) ${problem}: set ${port.setting} to a free port, e.g. ${port.setting}=${value + 1} npm start`);
    }
  }
}

const children = [];
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  // The runtime first (it ships its last log lines to the cloud), then the cloud.
  const [cloud, ...rest] = children;
  Promise.all(rest.map((c) => stop(c)))
    .then(() => (cloud ? stop(cloud) : undefined))
    .then(() => process.exit(code));
}
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stopAll(0));

/** What each program printed, to find its lines again for the summary (its web page's address). */
const printed = new Map();

/** Starts a program and resolves with the first match of `pattern` on its stdout. */
function startProgram(name, args, pattern, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  children.push(child);
  printed.set(name, '');
  child.stdout.on('data', (chunk) => printed.set(name, (printed.get(name) + chunk.toString()).slice(-65536)));
  child.on('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`${name} exited (${code}); stopping everything\n`);
      stopAll(1);
    }
  });
  return new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        resolve(match[1]);
        out = '';
        pattern = /$^/; // once
      }
    });
  });
}

/** The http:// address of a program's `web page on` line, waiting briefly: it follows the serving line. */
async function webPage(name) {
  for (let i = 0; i < 50; i++) {
    const match = /web page on (http:\/\/\S+)/.exec(printed.get(name) ?? '');
    if (match) return match[1];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return '(no web page: see its log above)';
}

const admin = async (...args) => JSON.parse((await run(process.execPath, [cloudMain, ...args, '--data-dir', cloudDir, '--json'])).stdout);

function writePrivate(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  chmodSync(`${path}.tmp`, 0o600);
  renameSync(`${path}.tmp`, path);
}

async function offline(config) {
  const address = await startProgram('platform-server', [serverMain, '-config', config], /platform-server serving on (\S+)/);
  process.stdout.write(
    `\n  platform-server runs ${config} (offline) on ${address}:\n    grpcurl -plaintext ${address} platform.robot.v1.RobotService/GetMachineStatus\n  Ctrl-C stops it.\n\n`,
  );
}

async function stack() {
  const ports = portSettings();
  await checkPorts(ports);
  const cloudAddress = await startProgram(
    'platform-cloud',
    [cloudMain, 'serve', '--data-dir', cloudDir, '--port', String(ports.cloud), '--web-port', String(ports.cloudWeb)],
    /platform-cloud serving (\S+)/,
    // The cloud moves a busy PostgreSQL port to a free one; databaseLogin below refuses that.
    { ...process.env, PLATFORM_QUERY_PG_PORT: String(ports.pg) },
  );
  // The org, machine and owner key of the first start; the key is shown only once by the cloud, so it
  // is kept here (mode 0600) for the next starts to print.
  let ids = existsSync(stackFile) ? JSON.parse(readFileSync(stackFile, 'utf8')) : undefined;
  if (!ids) {
    const org = await admin('org', 'create', 'demo');
    const machine = await admin('machine', 'create', '--org', org.id, '--name', 'example');
    const key = await admin('key', 'create', '--org', org.id, '--role', 'owner');
    ids = { org_id: org.id, machine_id: machine.machine_id, part_id: machine.part_id, part_secret: machine.part_secret, key_id: key.id, key: key.key };
    writePrivate(stackFile, `${JSON.stringify(ids, null, 2)}\n`);
  }
  const saved = await admin('part', 'config', 'get', '--part', ids.part_id);
  if (saved.revision === 0) {
    const example = JSON.parse(readFileSync(join(root, 'examples', 'fake.json'), 'utf8'));
    // The machine's ports are this start's settings (the credentials file below), not the part's config.
    delete example.network;
    // The example's data manager captures into this stack's home, not ~/.platform (PLATFORM_HOME moves it).
    for (const service of example.services ?? []) {
      if (service.api === 'core:service:data_manager') service.attributes = { ...service.attributes, capture_dir: join(home, 'capture') };
    }
    const configFile = join(home, 'start-example-config.json');
    writePrivate(configFile, JSON.stringify(example));
    await admin('part', 'config', 'set', '--part', ids.part_id, configFile);
  }
  // The machine's own network section wins over the cloud config's (core/online/README.md).
  const network = { bind_address: `localhost:${ports.server}`, web_bind_address: `localhost:${ports.serverWeb}` };
  writePrivate(credentialsFile, `${JSON.stringify({ cloud: { id: ids.part_id, secret: ids.part_secret, app_address: cloudAddress }, network }, null, 2)}\n`);
  const env = {
    ...process.env,
    PLATFORM_ONLINE_DIR: process.env.PLATFORM_ONLINE_DIR || join(home, 'online'),
    // The runtime's diagnostics (FTDC) stay in this stack's home too.
    PLATFORM_FTDC_DIR: process.env.PLATFORM_FTDC_DIR || join(home, 'diagnostics.data'),
    PLATFORM_PACKAGES_DIR: process.env.PLATFORM_PACKAGES_DIR || join(home, 'packages'),
  };
  const address = await startProgram('platform-server', [serverMain, '-config', credentialsFile], /platform-server serving on (\S+)/, env);
  const sql = await databaseLogin(cloudAddress, ids);
  const pgPort = Number(new URL(sql.uri).port || 5432);
  if (ports.pg !== 0 && pgPort !== ports.pg) {
    throw new StartError(`port ${ports.pg} (${PORTS.pg.what}) was taken while starting: set ${PORTS.pg.setting} to a free port`);
  }
  const login = JSON.stringify({ entity: ids.key_id, credentials: { type: 'api-key', payload: ids.key } });
  process.stdout.write(`
  The whole stack is up (gRPC reflection is on everywhere, so grpcurl needs no proto files).

  platform-cloud   ${cloudAddress}   data in ${cloudDir}
    data browser: ${await webPage('platform-cloud')}  (sign in with the key below)
    organization ${ids.org_id}, machine ${ids.machine_id}, part ${ids.part_id}
    owner API key: id ${ids.key_id}  key ${ids.key}
    TOKEN=$(grpcurl -plaintext -d '${login}' ${cloudAddress} platform.rpc.v1.AuthService/Authenticate | sed -n 's/.*"accessToken": "\\(.*\\)".*/\\1/p')
    grpcurl -plaintext -H "authorization: Bearer $TOKEN" -d '{"id":"${ids.part_id}"}' ${cloudAddress} platform.app.v1.AppService/GetRobotPart
    grpcurl -plaintext -H "authorization: Bearer $TOKEN" -d '{"id":"${ids.part_id}","levels":["info"]}' ${cloudAddress} platform.app.v1.AppService/GetRobotPartLogs

  platform-server  ${address}   online as part ${ids.part_id} (credentials in ${credentialsFile})
    control page: ${await webPage('platform-server')}
    grpcurl -plaintext -d '{"name":"thermometer"}' ${address} platform.component.sensor.v1.SensorService/GetReadings
    grpcurl -plaintext ${address} platform.robot.v1.RobotService/GetMachineStatus

  The example machine captures the thermometer once a second and syncs every 6 s; its rows, in SQL:
    PGPASSWORD='${sql.password}' psql "${sql.uri}" -c "SELECT time_requested, data FROM readings WHERE component_name = 'thermometer' ORDER BY time_requested DESC LIMIT 5"

  Change the machine: UpdateRobotPart, or
    node ${cloudMain} part config set --data-dir ${cloudDir} --part ${ids.part_id} <file.json>
  and the runtime applies it within a second.  Ctrl-C stops everything.

`);
}

/**
 * The organization's database user (the cloud's PostgreSQL endpoint): its password is set on the first
 * start and kept in the stack file, so that the printed psql line works on every start.
 */
async function databaseLogin(cloudAddress, ids) {
  const { createCloudClient } = await import(pathToFileURL(join(root, 'dist', 'cloud', 'client', 'cloud-client.js')).href);
  const client = createCloudClient({ serviceHost: cloudAddress, credentials: { type: 'api-key', authEntity: ids.key_id, payload: ids.key } });
  try {
    if (!ids.db_password) {
      const password = randomBytes(18).toString('base64url');
      await client.dataClient.configureDatabaseUser(ids.org_id, password);
      ids.db_password = password;
      writePrivate(stackFile, `${JSON.stringify(ids, null, 2)}\n`);
    }
    const { uri } = await client.dataClient.getDatabaseConnection(ids.org_id);
    return { password: ids.db_password, uri };
  } finally {
    client.close();
  }
}

const main = process.argv[2] ? offline(process.argv[2]) : stack();
main.catch((err) => {
  process.stderr.write(err instanceof StartError ? `npm start: ${err.message}\n` : `npm start failed: ${err.stack ?? err}\n`);
  stopAll(1);
});
