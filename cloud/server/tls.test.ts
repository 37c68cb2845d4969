// TLS end to end: a spawned platform-cloud started with --tls-cert/--tls-key (a self-signed certificate
// for localhost and 127.0.0.1) serves gRPC over TLS to the TypeScript client given the certificate as
// its root, refuses plaintext clients, and serves the PostgreSQL endpoint over TLS to psql. Bad flags
// stop `serve` with an error naming the flag.
import test from 'ava';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createCloudClient, type CloudClient } from '../client/index.js';
import type { CloudConnectionOptions } from '../client/connection.js';
import { adminJson, removeDataDir, spawnCloud, tempDataDir, type SpawnedCloud } from '../testing/spawn-cloud.js';

const run = promisify(execFile);
const main = fileURLToPath(new URL('./main.ts', import.meta.url));
// The PostgreSQL endpoint takes any free port, so parallel test files never collide.
process.env.PLATFORM_QUERY_PG_PORT = '0';

let certDir: string;
let certFile: string;
let keyFile: string;
let cloud: SpawnedCloud;
let orgId: string;
let apiKey: { id: string; key: string };
let partId: string;
let partSecret: string;
const clients: CloudClient[] = [];

async function selfSigned(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { cert, key };
}

function port(address: string): string {
  return address.slice(address.lastIndexOf(':') + 1);
}

function client(serviceHost: string, rootCertificates?: Buffer, credentials?: CloudConnectionOptions['credentials']): CloudClient {
  const c = createCloudClient({ serviceHost, credentials: credentials ?? { type: 'api-key', authEntity: apiKey.id, payload: apiKey.key }, rootCertificates });
  clients.push(c);
  return c;
}

test.before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'platform-cloud-tls-'));
  ({ cert: certFile, key: keyFile } = await selfSigned(certDir, 'server'));
  cloud = await spawnCloud(undefined, ['--tls-cert', certFile, '--tls-key', keyFile]);
  orgId = (await adminJson(cloud.dataDir, ['org', 'create', 'acme'])).id;
  apiKey = await adminJson<{ id: string; key: string }>(cloud.dataDir, ['key', 'create', '--org', orgId, '--role', 'owner']);
  const part = await adminJson(cloud.dataDir, ['machine', 'create', '--org', orgId, '--name', 'rover']);
  partId = part.part_id;
  partSecret = part.part_secret;
});

test.after.always(async () => {
  for (const c of clients) c.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

test.serial('the TypeScript client with https:// and the root certificate uploads and reads data', async (t) => {
  const root = readFileSync(certFile);
  const machine = client(`https://localhost:${port(cloud.address)}`, root, { type: 'robot-secret', authEntity: partId, payload: partSecret });
  const now = Date.now();
  await machine.dataClient.tabularDataCaptureUpload(
    [{ readings: { temperature: 21 } }, { readings: { temperature: 23 } }],
    partId,
    'rdk:component:sensor',
    'thermo',
    'Readings',
    [
      [new Date(now - 2000), new Date(now - 1995)],
      [new Date(now - 1000), new Date(now - 995)],
    ],
  );
  // The certificate names 127.0.0.1 too, so the IP address verifies as well as the host name.
  const owner = client(`https://127.0.0.1:${port(cloud.address)}`, root);
  const rows = await owner.dataClient.tabularDataBySQL(orgId, 'SELECT avg(data.readings.temperature::DOUBLE) AS avg, count(*) AS n FROM readings');
  t.deepEqual(rows, [{ avg: 22, n: 2 }]);
});

test('a plaintext client cannot talk to a TLS cloud', async (t) => {
  const plain = client(`http://${cloud.address}`);
  const err = await t.throwsAsync(plain.dataClient.tabularDataBySQL(orgId, 'SELECT 1 AS one'));
  t.is((err as { code?: number }).code, 14 /* UNAVAILABLE */);
});

test('an https client without the self-signed root refuses the server certificate', async (t) => {
  const untrusting = client(`https://localhost:${port(cloud.address)}`);
  const err = await t.throwsAsync(untrusting.dataClient.tabularDataBySQL(orgId, 'SELECT 1 AS one'));
  t.is((err as { code?: number }).code, 14 /* UNAVAILABLE */);
});

test.serial('psql with sslmode=require gets rows from the PostgreSQL endpoint, and plaintext is refused', async (t) => {
  const owner = client(`https://localhost:${port(cloud.address)}`, readFileSync(certFile));
  await owner.dataClient.configureDatabaseUser(orgId, 'tls data password');
  const conn = await owner.dataClient.getDatabaseConnection(orgId);
  const env = { ...process.env, PGPASSWORD: 'tls data password', PGCONNECT_TIMEOUT: '10' };
  const { stdout } = await run('psql', [`${conn.uri}?sslmode=require`, '-X', '-A', '-t', '-c', 'SELECT count(*), min(organization_id) FROM readings'], { env });
  t.is(stdout.trim(), `2|${orgId}`);
  // verify-full checks the certificate against the root and the host name: the session really is TLS.
  const verified = await run('psql', [`${conn.uri}?sslmode=verify-full&sslrootcert=${certFile}`, '-X', '-A', '-t', '-c', 'SELECT count(*) FROM readings'], {
    env,
  });
  t.is(verified.stdout.trim(), '2');
  // With certificates configured the endpoint refuses sessions that did not ask for TLS.
  const plain = await t.throwsAsync(run('psql', [`${conn.uri}?sslmode=disable`, '-X', '-A', '-t', '-c', 'SELECT 1'], { env }));
  t.regex((plain as { stderr?: string }).stderr ?? '', /SSL|TLS|ssl|tls/);
});

async function serveFails(args: string[]): Promise<{ code: number; stderr: string }> {
  const dataDir = tempDataDir();
  try {
    await run(process.execPath, ['--import', 'tsx', main, 'serve', '--data-dir', dataDir, '--port', '0', ...args], { env: process.env, timeout: 120_000 });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  } finally {
    removeDataDir(dataDir);
  }
}

test('serve refuses bad TLS flags with an error naming the flag', async (t) => {
  const missing = join(certDir, 'missing.pem');
  const garbage = join(certDir, 'garbage.pem');
  writeFileSync(garbage, 'not a pem file\n');
  const unreadable = join(certDir, 'unreadable.key');
  writeFileSync(unreadable, readFileSync(keyFile));
  chmodSync(unreadable, 0o000);
  const other = await selfSigned(certDir, 'other');
  const cases: [string[], RegExp][] = [
    [['--tls-cert', certFile], /--tls-cert needs --tls-key/],
    [['--tls-key', keyFile], /--tls-key needs --tls-cert/],
    [['--tls-cert', missing, '--tls-key', keyFile], /--tls-cert .*missing\.pem: cannot read the file \(ENOENT\)/],
    [['--tls-cert', certFile, '--tls-key', missing], /--tls-key .*missing\.pem: cannot read the file \(ENOENT\)/],
    [['--tls-cert', garbage, '--tls-key', keyFile], /--tls-cert .*garbage\.pem: not a PEM certificate/],
    [['--tls-cert', certFile, '--tls-key', garbage], /--tls-key .*garbage\.pem: not a PEM private key/],
    [['--tls-cert', certFile, '--tls-key', other.key], /--tls-key .*other\.key does not belong to the certificate of --tls-cert/],
  ];
  // root reads any file, so the unreadable case only holds for other users.
  if (process.getuid?.() !== 0) cases.push([['--tls-cert', certFile, '--tls-key', unreadable], /--tls-key .*unreadable\.key: cannot read the file \(EACCES\)/]);
  for (const [args, message] of cases) {
    const { code, stderr } = await serveFails(args);
    t.is(code, 1, args.join(' '));
    t.regex(stderr, message, args.join(' '));
  }
});
