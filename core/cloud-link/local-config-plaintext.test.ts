// The security rule end to end, with the real platform-server and a full local config whose `cloud`
// section points at a plaintext address on this machine's own non-loopback interface, where an HTTP/2
// listener records every connection and request. Without -allow-insecure-creds the data manager (whose sync
// runs in its own worker) and the packages refuse to send the part secret and say so, naming the flag, and
// nothing connects to the listener; with the flag, both reach it and the secret arrives there (the control
// that shows the listener would have seen a link that was not refused).
import test from 'ava';
import { createServer } from 'node:http2';
import type { Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataManagerServiceClient } from '../../gen/platform/service/datamanager/v1/data_manager.js';
import { RobotServiceClient } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from '../server/testing/grpc.js';
import { spawnRuntime } from '../server/testing/spawn-runtime.js';
import { waitFor } from '../serving/testing/eventually.js';

const SECRET = 'part-secret-that-must-not-travel-in-plaintext';

const ip = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

/**
 * A plaintext HTTP/2 listener on the non-loopback address (gRPC's transport) that counts connections, keeps
 * every request's path and body, and answers each call UNAVAILABLE.
 */
async function listener() {
  const sockets: Socket[] = [];
  const calls: { path: string; body: Buffer }[] = [];
  const server = createServer();
  server.on('connection', (socket: Socket) => sockets.push(socket));
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      calls.push({ path: String(headers[':path']), body: Buffer.concat(chunks) });
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '14', 'grpc-message': 'recording listener' }));
      stream.end();
    });
    stream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, ip, resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => sockets.length,
    calls,
    /** Whether any request carried the secret. */
    sawSecret: () => calls.some((c) => c.body.includes(SECRET)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function localConfig(port: number) {
  return {
    cloud: { id: 'part-1', secret: SECRET, app_address: `http://${ip}:${port}` },
    components: [
      {
        name: 'thermometer',
        api: 'core:component:sensor',
        model: 'fake',
        attributes: { readings: { celsius: 21 } },
        service_configs: [{ type: 'data_manager', attributes: { capture_methods: [{ method: 'Readings', capture_frequency_hz: 20 }] } }],
      },
      // Runs on the package's folder: it cannot be built until the package is installed.
      { name: 'labels', api: 'core:component:sensor', model: 'fake', attributes: { readings: { file: '${packages.shapes}/labels.txt' } } },
    ],
    services: [
      {
        name: 'dm',
        api: 'core:service:data_manager',
        model: 'builtin',
        attributes: { capture_dir: mkdtempSync(join(tmpdir(), 'plaintext-capture-')), sync_interval_mins: 0.01 },
      },
    ],
    packages: [{ name: 'shapes', package: 'org-1/shapes', version: 'v1', type: 'ml_model' }],
  };
}

const env = () => ({ PLATFORM_PACKAGES_DIR: mkdtempSync(join(tmpdir(), 'plaintext-packages-')), PLATFORM_PACKAGES_RETRY_MS: '500' });

async function syncStatus(address: string, command: 'sync' | 'status'): Promise<Record<string, unknown>> {
  const dm = new DataManagerServiceClient(address, insecure());
  try {
    return (await call(dm, 'doCommand', { name: 'dm', command: { [command]: {} } })).result.status as Record<string, unknown>;
  } finally {
    dm.close();
  }
}

async function resourceError(address: string, name: string): Promise<string | undefined> {
  const robot = new RobotServiceClient(address, insecure());
  try {
    const status = (await call(robot, 'getMachineStatus', {})) as { resources: { name?: { name: string }; error: string }[] };
    return status.resources.find((r) => r.name?.name === name)?.error;
  } finally {
    robot.close();
  }
}

test.serial('a full local config with a plaintext non-loopback cloud: the data manager and packages refuse to send the secret and say so', async (t) => {
  if (!ip) return t.fail('this machine has no non-loopback IPv4 address to test with');
  const cloud = await listener();
  t.teardown(() => cloud.close());
  const runtime = await spawnRuntime(localConfig(cloud.port), { env: env() });
  t.teardown(() => runtime.stop());
  const refusal = new RegExp(
    `refusing to send the machine credentials in plaintext to ${ip.replace(/\./g, '\\.')}, which is not a loopback address: .*-allow-insecure-creds`,
  );

  // The data manager: its sync, asked to run now, reports the refusal; capture goes on.
  const status = await syncStatus(runtime.address, 'sync');
  t.regex(String(status.last_error), refusal);
  t.regex(String(status.last_error), /^sync is off: /);
  // The packages: the resource that needs the package says why it cannot have it.
  const labels = await waitFor('the package error on its resource', async () => {
    const error = await resourceError(runtime.address, 'labels');
    return error && refusal.test(error) ? error : undefined;
  });
  t.regex(labels, /package shapes \(org-1\/shapes@v1\): not installed and cannot be downloaded/);
  // Both said so in the log, at error level.
  const errors = runtime.logs().filter((l) => l.level === 50 && refusal.test(JSON.stringify(l)));
  t.true(
    errors.some((l) => /^sync is off/.test(String(l.msg))),
    'the data manager logged the refusal',
  );
  t.true(
    errors.some((l) => l.msg === 'packages cannot be downloaded'),
    'the packages logged the refusal',
  );
  // Nothing was dialled: the secret never reached a listening socket.
  t.is(cloud.connections(), 0);
  t.false(cloud.sawSecret());
});

test.serial('the same config with -allow-insecure-creds sends the secret there (the control of the test above)', async (t) => {
  if (!ip) return t.fail('this machine has no non-loopback IPv4 address to test with');
  const cloud = await listener();
  t.teardown(() => cloud.close());
  const runtime = await spawnRuntime(localConfig(cloud.port), { env: env(), args: ['-allow-insecure-creds'] });
  t.teardown(() => runtime.stop());
  // The listener sees Authenticate carrying the secret: it would have seen a link that was not refused.
  await waitFor('Authenticate with the secret', () => cloud.sawSecret());
  t.true(cloud.calls.some((c) => c.path === '/platform.rpc.v1.AuthService/Authenticate'));
  // Both reached the listener, which answers every call UNAVAILABLE: the sync and the package say so.
  const synced = await waitFor('a sync pass that reached the listener', async () => {
    const status = await syncStatus(runtime.address, 'sync');
    return /recording listener/.test(String(status.last_error)) ? String(status.last_error) : undefined;
  });
  t.regex(synced, /^sync of .* failed: /);
  const labels = await waitFor('the package error on its resource', async () => {
    const error = await resourceError(runtime.address, 'labels');
    return error && /recording listener/.test(error) ? error : undefined;
  });
  t.notRegex(labels, /refusing/);
  t.false(runtime.logs().some((l) => /refusing to send/.test(JSON.stringify(l))));
});
