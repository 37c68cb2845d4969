// platform-cloud's web port: its line and flag, and gRPC-Web reaching the same services (core and
// extensions alike) as gRPC clients, authorized by the caller's own bearer token.
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { credentials as grpcCredentials, Metadata } from '@grpc/grpc-js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GetRobotPartRequest, GetRobotPartResponse } from '../../gen/platform/app/v1/robot_part.js';
import { ListDatasetsByOrganizationIDRequest, ListDatasetsByOrganizationIDResponse } from '../../gen/platform/app/dataset/v1/dataset.js';
import { AuthenticateRequest, AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { FORWARDED_FOR } from '../../core/serving/web/forwarded-for.js';
import { frame } from '../../core/serving/web/grpc-web.js';
import { removeDataDir, spawnCloud, tempDataDir } from '../testing/spawn-cloud.js';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { defaultWebPort } from './cloud-web.js';

const run = promisify(execFile);
const main = fileURLToPath(new URL('../server/main.ts', import.meta.url));

let fx: CloudFixture;
test.before(async () => {
  // The page's bundle, as `npm run build` makes it.
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build-web.mjs', import.meta.url))], { stdio: 'inherit' });
  fx = await startFixture();
});
test.after.always(async () => {
  await fx?.close();
});

/** One unary gRPC-Web call over fetch: the reply's message bytes, grpc-status and grpc-message. */
async function grpcWeb(path: string, message: Uint8Array, authorization?: string): Promise<{ status: number; detail: string; reply?: Uint8Array }> {
  const body = frame(0, message);
  const headers: Record<string, string> = { 'content-type': 'application/grpc-web+proto' };
  if (authorization) headers.authorization = authorization;
  const response = await fetch(new URL(path, fx.cloud.webUrl), { method: 'POST', headers, body });
  const bytes = new Uint8Array(await response.arrayBuffer());
  let at = 0;
  let reply: Uint8Array | undefined;
  let status = -1;
  let detail = '';
  while (at + 5 <= bytes.length) {
    const length = new DataView(bytes.buffer, at + 1, 4).getUint32(0);
    const payload = bytes.subarray(at + 5, at + 5 + length);
    if (bytes[at] === 0) reply = payload;
    else {
      const text = new TextDecoder().decode(payload);
      status = Number(/grpc-status: (\d+)/.exec(text)?.[1]);
      detail = decodeURIComponent(/grpc-message: (.*)\r\n/.exec(text)?.[1] ?? '');
    }
    at += 5 + length;
  }
  return { status, detail, reply };
}

test('the web line comes before the serving line, and gRPC-Web reaches a core service with the caller’s token, checked like any client', async (t) => {
  // spawnCloud reads the web line once the serving line is out: it is found only if it came first.
  t.regex(fx.cloud.webUrl, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  const token = (await fx.client(fx.keys.ownerA).connection.metadata()).get('authorization')[0] as string;
  const request = ListDatasetsByOrganizationIDRequest.encode({ organizationId: fx.orgA }).finish();
  const path = '/platform.app.dataset.v1.DatasetService/ListDatasetsByOrganizationID';
  const ok = await grpcWeb(path, request, token);
  t.is(ok.status, 0, ok.detail);
  t.deepEqual(ListDatasetsByOrganizationIDResponse.decode(ok.reply!).datasets, []);
  const anonymous = await grpcWeb(path, request);
  t.is(anonymous.status, 16);
  t.regex(anonymous.detail, /missing authorization metadata/);
  const otherOrg = await grpcWeb(path, request, (await fx.client(fx.keys.ownerB).connection.metadata()).get('authorization')[0] as string);
  t.is(otherOrg.status, 7);
  t.regex(otherOrg.detail, /belongs to another organization/);
});

test('gRPC-Web reaches services that extensions add (AppService), and names methods the cloud does not serve', async (t) => {
  const token = (await fx.client(fx.keys.ownerA).connection.metadata()).get('authorization')[0] as string;
  const part = await grpcWeb('/platform.app.v1.AppService/GetRobotPart', GetRobotPartRequest.encode({ id: fx.machineA1.part_id }).finish(), token);
  t.is(part.status, 0, part.detail);
  t.is(GetRobotPartResponse.decode(part.reply!).part?.id, fx.machineA1.part_id);
  const runtimeOnly = await grpcWeb('/platform.component.motor.v1.MotorService/Stop', new Uint8Array(), token);
  t.is(runtimeOnly.status, 12);
  t.regex(runtimeOnly.detail, /no such method/);
});

test('--web-port: the default is the gRPC port + 1 (a free port for port 0), a given port is used, a bad one is refused naming the flag', async (t) => {
  t.is(defaultWebPort(8081), 8082);
  t.is(defaultWebPort(0), 0);
  t.is(defaultWebPort(65535), 0);
  const bad = await run(process.execPath, ['--import', 'tsx', main, 'serve', '--data-dir', tempDataDir(), '--port', '0', '--web-port', 'eighty']).then(
    () => undefined,
    (err: { stderr: string; code: number }) => err,
  );
  t.is(bad?.code, 1);
  t.regex(bad?.stderr ?? '', /--web-port must be an integer from 0 to 65535, got "eighty"/);

  // A free port found here, then given to the cloud.
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const dir = tempDataDir();
  const cloud = await spawnCloud(dir, ['--web-port', String(port)]);
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(dir);
  });
  t.is(cloud.webUrl, `http://127.0.0.1:${port}/`);
  const page = await fetch(cloud.webUrl);
  t.is(page.status, 200);
  t.regex(await page.text(), /<title>platform-cloud<\/title>/);
});

/** A gRPC-Web Authenticate with a wrong key, sent from `localAddress` (any 127.x address reaches loopback). */
function wrongLoginFrom(webUrl: string, localAddress: string, keyId: string): Promise<number> {
  const message = AuthenticateRequest.encode({ entity: keyId, credentials: { type: 'api-key', payload: 'not the key' } }).finish();
  const body = frame(0, message);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL('/platform.rpc.v1.AuthService/Authenticate', webUrl),
      { method: 'POST', localAddress, headers: { 'content-type': 'application/grpc-web+proto' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Number(/grpc-status: (\d+)/.exec(Buffer.concat(chunks).toString('latin1'))?.[1])));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test("logins through the web page back off per browser address, not for the loopback hop: one visitor's wrong keys do not lock out the others", async (t) => {
  const dir = tempDataDir();
  const cloud = await spawnCloud(dir, [], { PLATFORM_LOGIN_MAX_ADDRESS_FAILURES: '3', PLATFORM_LOGIN_MAX_FAILURES: '100' });
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(dir);
  });
  // Three failures from one browser address (each with another key id, so only the address counts) ...
  for (let i = 0; i < 3; i++) t.is(await wrongLoginFrom(cloud.webUrl, '127.0.0.2', `key-${i}`), 16);
  // ... back that address off,
  t.is(await wrongLoginFrom(cloud.webUrl, '127.0.0.2', 'key-3'), 8, 'the same browser is refused before any hash');
  // while another browser, through the same page and the same loopback hop, is still heard.
  t.is(await wrongLoginFrom(cloud.webUrl, '127.0.0.3', 'key-4'), 16, 'another browser is not backed off');

  // A gRPC client cannot claim a browser's address: without the web port's proof its own address counts.
  const auth = new AuthServiceClient(cloud.address, grpcCredentials.createInsecure());
  t.teardown(() => auth.close());
  const claim = new Metadata();
  claim.set(FORWARDED_FOR, '198.51.100.1');
  const direct = (keyId: string) =>
    new Promise<number>((resolve) =>
      auth.authenticate({ entity: keyId, credentials: { type: 'api-key', payload: 'not the key' } }, claim, (err) => resolve(err?.code ?? 0)),
    );
  for (let i = 0; i < 3; i++) t.is(await direct(`direct-${i}`), 16);
  t.is(await direct('direct-3'), 8, "the claimed address was ignored: the client's own address backed off");
  t.is(await wrongLoginFrom(cloud.webUrl, '127.0.0.4', 'key-5'), 16, 'browsers through the page are still heard');
});
