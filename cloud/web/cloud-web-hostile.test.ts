// The data browser's web port against hostile requests, without any login (issue 27): huge bodies are
// refused while they stream in and the cloud's memory stays put (finding 2); an Authenticate with a
// 128 KiB entity name gets a short error and the page's next calls still work, through the web port and
// over gRPC alike (finding 3); requests naming another Host or Origin are refused (finding 10).
import test, { type ExecutionContext } from 'ava';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { AuthenticateRequest, AuthenticateResponse, AuthServiceClient } from '../../gen/platform/rpc/v1/auth.js';
import { grpcWebCall, hostilePost, peakRssDuring, rssBytes } from '../../core/serving/testing/web-attacks.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';

const MiB = 1024 * 1024;
const AUTHENTICATE = '/platform.rpc.v1.AuthService/Authenticate';

let cloud: SpawnedCloud;
let key: { id: string; key: string };
test.before(async () => {
  cloud = await spawnCloud(undefined, ['--web-allowed-hosts', 'data.example,Other.Example.'], { PLATFORM_WEB_ALLOWED_HOSTS: 'bench.example' });
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'hostile-web']);
  key = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
});
test.after.always(async () => {
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const authenticate = (entity: string, payload: string, headers: Record<string, string> = {}) =>
  grpcWebCall(cloud.webUrl, AUTHENTICATE, AuthenticateRequest.encode({ entity, credentials: { type: 'api-key', payload } }).finish(), headers);

async function signsIn(t: ExecutionContext, headers: Record<string, string> = {}) {
  const ok = await authenticate(key.id, key.key, headers);
  t.is(ok.code, 0, `${ok.httpStatus} ${ok.detail || ok.body.toString()}`);
  t.truthy(ok.reply && AuthenticateResponse.decode(ok.reply).accessToken);
}

test.serial('a 64 MiB body is refused while it streams in, and the cloud does not hold it', async (t) => {
  const pid = cloud.child.pid!;
  const before = rssBytes(pid);
  const { peak, result } = await peakRssDuring(pid, () =>
    Promise.all([
      hostilePost(cloud.webUrl, AUTHENTICATE, { announce: 64 * MiB, sendBytes: 64 * MiB }),
      hostilePost(cloud.webUrl, AUTHENTICATE, { announce: 1024, sendBytes: 64 * MiB }),
      hostilePost(cloud.webUrl, '/platform.app.v1.AppService/Nope', { announce: 1024 * MiB, sendBytes: 64 * MiB }),
    ]),
  );
  const [announced, trailing, unknown] = result;
  t.is(announced.code, 8, announced.detail);
  t.regex(announced.detail, /the request message is 67108864 bytes; this web port forwards at most 4194304 \(PLATFORM_WEB_MAX_REQUEST_BYTES\)/);
  t.is(trailing.code, 3, trailing.detail);
  t.is(unknown.code, 12, unknown.detail);
  const growth = peak - before;
  t.log(`RSS ${Math.round(before / MiB)} MiB before, peak ${Math.round(peak / MiB)} MiB (${Math.round(growth / MiB)} MiB growth)`);
  t.true(growth < 32 * MiB, `the cloud grew by ${Math.round(growth / MiB)} MiB`);
  await signsIn(t);
});

test.serial(
  'an Authenticate with a 128 KiB entity name gets a short INVALID_ARGUMENT, a long unknown one a bounded echo, and the next calls still work',
  async (t) => {
    const entity = 'e'.repeat(128 * 1024);
    const refused = await authenticate(entity, 'wrong');
    t.is(refused.code, 3, refused.detail);
    t.is(refused.detail, 'entity: at most 256 characters (an API key id or a machine part id), got 131072');
    // The longest entity looked up is echoed bounded in its UNAUTHENTICATED.
    const unknown = await authenticate('e'.repeat(256), 'wrong');
    t.is(unknown.code, 16, unknown.detail);
    t.regex(unknown.detail, /^invalid credentials for entity e+… \(\d+ more characters\)$/);
    t.true(unknown.detail.length < 300);
    await signsIn(t);
    // Over gRPC too: the status is bounded by the server itself, so a direct client's channel survives.
    const client = new AuthServiceClient(cloud.address, credentials.createInsecure());
    t.teardown(() => client.close());
    const call = (name: string) =>
      new Promise<ServiceError | null>((resolve) =>
        client.authenticate({ entity: name, credentials: { type: 'api-key', payload: name === key.id ? key.key : 'wrong' } }, (err) => resolve(err)),
      );
    const direct = await call(`${entity}x`);
    t.is(direct?.code, 3);
    t.true((direct?.details.length ?? 0) < 300);
    t.is(await call(key.id), null);
  },
);

test.serial('requests naming another Host or Origin are refused with 403; the configured names, loopback and addresses are served', async (t) => {
  const port = new URL(cloud.webUrl).port;
  const rebind = await authenticate(key.id, key.key, { host: `rebind.attacker.example:${port}` });
  t.is(rebind.httpStatus, 403);
  t.regex(rebind.body.toString(), /Host "rebind\.attacker\.example:\d+" is not a name of this web port/);
  const origin = await authenticate(key.id, key.key, { origin: 'https://rebind.attacker.example' });
  t.is(origin.httpStatus, 403);
  const nullOrigin = await authenticate(key.id, key.key, { origin: 'null' });
  t.is(nullOrigin.httpStatus, 403);
  for (const host of ['127.0.0.1', 'localhost', 'data.example', 'other.example', 'bench.example']) {
    await signsIn(t, { host: `${host}:${port}`, origin: `http://${host}:${port}` });
  }
  const page = await fetch(cloud.webUrl);
  t.is(page.status, 200);
  t.is(page.headers.get('content-security-policy'), "frame-ancestors 'none'");
  t.is(page.headers.get('x-frame-options'), 'DENY');
});
