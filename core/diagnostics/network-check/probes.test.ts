import test from 'ava';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { probeBind, probeDns, probeTcp, ProbeTimeoutError, withTimeout } from './probes.js';

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end());
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

test('bind succeeds on a free port and releases it; a port in use fails naming the likely cause', async (t) => {
  t.regex(await probeBind('127.0.0.1', 0), /^bound 127\.0\.0\.1:\d+$/);
  const busy = await listen();
  t.teardown(() => busy.close());
  const port = portOf(busy);
  await t.throwsAsync(probeBind('127.0.0.1', port), { message: /EADDRINUSE.*is platform-server already running\?/ });
  busy.close();
  await new Promise((r) => busy.once('close', r));
  t.regex(await probeBind('127.0.0.1', port), new RegExp(`^bound 127\\.0\\.0\\.1:${port}$`));
});

test('dns resolves localhost and fails for a name that cannot exist', async (t) => {
  t.regex(await probeDns('localhost'), /127\.0\.0\.1|::1/);
  await t.throwsAsync(probeDns('nonexistent.invalid'), { code: 'ENOTFOUND' });
});

test('tcp connects to a listening server and fails on a closed port', async (t) => {
  const server = await listen();
  const port = portOf(server);
  t.is(await probeTcp('127.0.0.1', port, 10_000), `connected to 127.0.0.1:${port}`);
  await new Promise((r) => server.close(r));
  await t.throwsAsync(probeTcp('127.0.0.1', port, 10_000), { code: 'ECONNREFUSED' });
});

test('a probe that never finishes is cut off by its timeout', async (t) => {
  // withTimeout's timer does not keep a process alive (unref): this one keeps the test's worker alive until
  // it fires, or AVA, finding nothing else pending, ends the test as "never resolved".
  const alive = setTimeout(() => undefined, 10_000);
  t.teardown(() => clearTimeout(alive));
  t.is(
    (await t.throwsAsync(withTimeout(new Promise(() => undefined), 10), { instanceOf: ProbeTimeoutError, message: 'timed out after 10 ms' }))?.errorCode,
    'CORE_ERR_PROBE_TIMEOUT',
  );
});
