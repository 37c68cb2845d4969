// The machine's one link to the cloud, against a real gRPC server (AuthService and RobotService/Log) and
// a raw TCP listener on this machine's own non-loopback address: the address rules, the plaintext rule
// (refused before anything is dialled), authentication with the part's secret or an API key, and token
// renewal when the token expires or the cloud refuses it.
import test from 'ava';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { createServer, type Server as TcpServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { AuthServiceService, type AuthenticateRequest, type AuthenticateResponse } from '../../gen/platform/rpc/v1/auth.js';
import { RobotServiceService, type LogRequest, type LogResponse } from '../../gen/platform/app/v1/robot_part.js';
import { checkCredentialTransport, cloudTarget, InsecureCredentialsError } from './address.js';
import { CloudLink, CredentialsRefusedError } from './cloud-link.js';
import { linkSettingsOf, type CloudLinkSettings } from './link-settings.js';

/** This machine's first non-loopback IPv4 address: plaintext there needs -allow-insecure-creds. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
}

/** A TCP listener that records every connection and every byte sent to it, and answers nothing. */
async function rawListener(host: string): Promise<{ port: number; connections: number; bytes: () => Buffer; server: TcpServer; sockets: Socket[] }> {
  const chunks: Buffer[] = [];
  const state = { port: 0, connections: 0, bytes: () => Buffer.concat(chunks), server: createServer(), sockets: [] as Socket[] };
  state.server.on('connection', (socket) => {
    state.connections++;
    state.sockets.push(socket);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => state.server.listen(0, host, resolve));
  state.port = (state.server.address() as { port: number }).port;
  return state;
}

const closeListener = (l: { server: TcpServer; sockets: Socket[] }) =>
  new Promise<void>((resolve) => {
    for (const s of l.sockets) s.destroy();
    l.server.close(() => resolve());
  });

interface FakeCloud {
  address: string;
  authentications: AuthenticateRequest[];
  /** The bearer tokens the Log calls carried. */
  bearers: string[];
  /** Tokens the next Log calls refuse (as a cloud restarted with another signing secret would). */
  revoked: Set<string>;
  server: Server;
}

async function fakeCloud(options: { expiresInSeconds: number; secret: string; apiKey: { id: string; key: string } }): Promise<FakeCloud> {
  const server = new Server();
  const cloud: FakeCloud = { address: '', authentications: [], bearers: [], revoked: new Set(), server };
  let issued = 0;
  server.addService(AuthServiceService, {
    authenticate(call: ServerUnaryCall<AuthenticateRequest, AuthenticateResponse>, callback: sendUnaryData<AuthenticateResponse>) {
      cloud.authentications.push(call.request);
      const c = call.request.credentials;
      const good =
        (c?.type === 'robot-secret' && call.request.entity === 'part-1' && c.payload === options.secret) ||
        (c?.type === 'api-key' && call.request.entity === options.apiKey.id && c.payload === options.apiKey.key);
      if (!good) return callback({ code: status.UNAUTHENTICATED, details: 'wrong secret' });
      callback(null, { accessToken: `token-${++issued}`, expiresInSeconds: options.expiresInSeconds });
    },
  });
  server.addService(RobotServiceService, {
    log(call: ServerUnaryCall<LogRequest, LogResponse>, callback: sendUnaryData<LogResponse>) {
      const bearer = String(call.metadata.get('authorization')[0] ?? '').replace(/^Bearer /, '');
      cloud.bearers.push(bearer);
      if (cloud.revoked.has(bearer)) return callback({ code: status.UNAUTHENTICATED, details: 'token signed with another secret' });
      callback(null, {});
    },
  } as never);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cloud.address = `127.0.0.1:${port}`;
  return cloud;
}

const settings = (appAddress: string, overrides: Partial<CloudLinkSettings> = {}): CloudLinkSettings => ({
  partId: 'part-1',
  appAddress,
  credentials: { type: 'robot-secret', entity: 'part-1', payload: 'the-part-secret' },
  allowInsecure: false,
  ...overrides,
});

test('the address: https is TLS on 443 by default, http and a bare host:port are plaintext', (t) => {
  t.deepEqual(cloudTarget('https://cloud.example.com'), { target: 'cloud.example.com:443', tls: true, host: 'cloud.example.com' });
  t.deepEqual(cloudTarget('http://cloud.example.com'), { target: 'cloud.example.com:80', tls: false, host: 'cloud.example.com' });
  t.deepEqual(cloudTarget('10.0.0.5:8081'), { target: '10.0.0.5:8081', tls: false, host: '10.0.0.5' });
  t.deepEqual(cloudTarget('http://[::1]:8081/'), { target: '[::1]:8081', tls: false, host: '::1' });
  t.throws(() => cloudTarget(''), { message: /cloud\.app_address is required/ });
});

test('plaintext is allowed to loopback, to anywhere over TLS, and elsewhere only with -allow-insecure-creds', (t) => {
  for (const address of ['localhost:8081', '127.0.0.2:8081', 'http://[::1]:8081', 'https://10.1.2.3:8081']) {
    t.notThrows(() => checkCredentialTransport(cloudTarget(address), false), address);
  }
  const refused = t.throws(() => checkCredentialTransport(cloudTarget('http://10.1.2.3:8081'), false), { instanceOf: InsecureCredentialsError });
  t.is(refused?.errorCode, 'CORE_ERR_INSECURE_CREDENTIALS');
  t.regex(refused.message, /^refusing to send the machine credentials in plaintext to 10\.1\.2\.3, which is not a loopback address: .*-allow-insecure-creds/);
  t.notThrows(() => checkCredentialTransport(cloudTarget('http://10.1.2.3:8081'), true));
});

test('settings from a config cloud section carry the secret or the API key, and none without an app_address', (t) => {
  t.deepEqual(linkSettingsOf({ id: 'p', secret: 's', app_address: 'localhost:1' }, false)?.credentials, {
    type: 'robot-secret',
    entity: 'p',
    payload: 's',
  });
  t.deepEqual(linkSettingsOf({ id: 'p', api_key: { id: 'k', key: 'v' }, app_address: 'localhost:1' }, true), {
    partId: 'p',
    appAddress: 'localhost:1',
    credentials: { type: 'api-key', entity: 'k', payload: 'v' },
    allowInsecure: true,
  });
  t.is(linkSettingsOf({ id: 'p', secret: 's' }, false), undefined);
  t.is(linkSettingsOf(undefined, false), undefined);
});

test.serial('a link to a non-loopback plaintext address is refused before anything is dialled; with the flag it dials', async (t) => {
  const ip = outsideAddress();
  if (!ip) return t.fail('this machine has no non-loopback IPv4 address to test with');
  const listener = await rawListener(ip);
  t.teardown(() => closeListener(listener));
  const address = `http://${ip}:${listener.port}`;
  const error = t.throws(() => new CloudLink(settings(address)), { instanceOf: InsecureCredentialsError });
  t.is(error?.errorCode, 'CORE_ERR_INSECURE_CREDENTIALS');
  t.regex(error.message, new RegExp(`plaintext to ${ip.replace(/\./g, '\\.')}.*-allow-insecure-creds`));
  // The control: the same address with the flag really dials, so the listener would have seen a refused link.
  const allowed = new CloudLink(settings(address, { allowInsecure: true }), { timeoutMs: 3000 });
  t.teardown(() => allowed.close());
  await t.throwsAsync(allowed.metadata());
  t.true(listener.connections > 0, 'the allowed link dialled the listener');
  const before = listener.connections;
  t.is(t.throws(() => new CloudLink(settings(address)), { instanceOf: InsecureCredentialsError })?.errorCode, 'CORE_ERR_INSECURE_CREDENTIALS');
  t.is(listener.connections, before, 'a refused link dials nothing');
});

test.serial('the link authenticates with the secret or an API key, renews an expired token and retries once when a token is refused', async (t) => {
  const cloud = await fakeCloud({ expiresInSeconds: 0, secret: 'the-part-secret', apiKey: { id: 'key-1', key: 'key-secret' } });
  t.teardown(() => cloud.server.forceShutdown());
  const link = new CloudLink(settings(cloud.address));
  t.teardown(() => link.close());
  await link.unary(link.robot.log, { id: 'part-1', logs: [] });
  t.deepEqual(cloud.authentications[0], { entity: 'part-1', credentials: { type: 'robot-secret', payload: 'the-part-secret' } });
  // A lifetime of 0 s: every call needs a new token.
  await link.unary(link.robot.log, { id: 'part-1', logs: [] });
  t.deepEqual(cloud.bearers, ['token-1', 'token-2']);

  const byKey = new CloudLink(settings(cloud.address, { credentials: { type: 'api-key', entity: 'key-1', payload: 'key-secret' } }));
  t.teardown(() => byKey.close());
  await byKey.unary(byKey.robot.log, { id: 'part-1', logs: [] });
  t.deepEqual(cloud.authentications.at(-1), { entity: 'key-1', credentials: { type: 'api-key', payload: 'key-secret' } });
});

test.serial('a token the cloud refuses is renewed and the call tried once more; wrong credentials are named', async (t) => {
  const cloud = await fakeCloud({ expiresInSeconds: 3600, secret: 'the-part-secret', apiKey: { id: 'key-1', key: 'key-secret' } });
  t.teardown(() => cloud.server.forceShutdown());
  const link = new CloudLink(settings(cloud.address));
  t.teardown(() => link.close());
  await link.unary(link.robot.log, { id: 'part-1', logs: [] });
  await link.unary(link.robot.log, { id: 'part-1', logs: [] });
  t.deepEqual(cloud.bearers, ['token-1', 'token-1'], 'a valid token is kept');
  cloud.revoked.add('token-1');
  await link.unary(link.robot.log, { id: 'part-1', logs: [] });
  t.deepEqual(cloud.bearers, ['token-1', 'token-1', 'token-1', 'token-2']);
  t.is(cloud.authentications.length, 2);

  const wrong = new CloudLink(settings(cloud.address, { credentials: { type: 'robot-secret', entity: 'part-1', payload: 'wrong' } }));
  t.teardown(() => wrong.close());
  const refused = await t.throwsAsync(wrong.unary(wrong.robot.log, { id: 'part-1', logs: [] }), { instanceOf: CredentialsRefusedError });
  t.is(refused?.errorCode, 'CORE_ERR_CREDENTIALS_REFUSED');
  t.is(refused.code, status.UNAUTHENTICATED);
  t.regex(refused.message, /^the cloud refused the machine credentials \(wrong part secret or API key\?\): wrong secret \(UNAUTHENTICATED\)$/);
});
