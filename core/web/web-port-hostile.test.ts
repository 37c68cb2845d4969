// The control page's web port against hostile requests, without any login (issue 27): huge bodies are
// refused while they stream in and the runtime's memory stays put (finding 2); an oversized resource
// name gets a short error and the next call still works (finding 3); requests naming another Host or
// Origin are refused and pages cannot be framed (finding 10). All against the real platform-server.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { GetReadingsRequest, GetReadingsResponse } from '../../gen/platform/component/sensor/v1/sensor.js';
import { SaveConfigRequest, StopAllRequest } from '../../gen/platform/robot/v1/robot.js';
import { spawnRuntime, type SpawnedRuntime } from '../server/testing/spawn-runtime.js';
import { webUrlOf } from '../serving/testing/chromium.js';
import { grpcWebCall, hostilePost, peakRssDuring, rssBytes } from '../serving/testing/web-attacks.js';

const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];
const MiB = 1024 * 1024;
const READINGS = '/platform.component.sensor.v1.SensorService/GetReadings';

let runtime: SpawnedRuntime;
let url: string;
test.before(async () => {
  runtime = await spawnRuntime(
    { components, network: { bind_address: 'localhost:0', web_allowed_hosts: ['robot.example'] } },
    { env: { PLATFORM_WEB_ALLOWED_HOSTS: 'bench.example' } },
  );
  url = webUrlOf(runtime.output());
});
test.after.always(async () => {
  await runtime?.stop();
});

async function readingsWork(t: ExecutionContext) {
  const ok = await grpcWebCall(url, READINGS, GetReadingsRequest.encode({ name: 'thermo' }).finish());
  t.is(ok.code, 0, ok.detail);
  t.deepEqual(GetReadingsResponse.decode(ok.reply!).readings, { t: 1 });
}

test.serial('a 64 MiB body is refused while it streams in, whatever its frame announces, and the runtime does not hold it', async (t) => {
  const pid = runtime.process.pid!;
  const before = rssBytes(pid);
  const { peak, result } = await peakRssDuring(pid, async () => [
    // Announced past the message limit: refused at the frame's 5-byte head.
    await hostilePost(url, READINGS, { announce: 64 * MiB, sendBytes: 64 * MiB }),
    // A frame under the limit, then bytes after it.
    await hostilePost(url, READINGS, { announce: 1024, sendBytes: 64 * MiB }),
    // A Content-Length past the limit: refused before a byte of the body is read.
    await hostilePost(url, READINGS, { body: Buffer.alloc(6 * MiB), headers: {} }),
    // An unknown method: refused before its body is read.
    await hostilePost(url, '/platform.robot.v1.RobotService/Nope', { announce: 64 * MiB, sendBytes: 64 * MiB }),
  ]);
  const [announced, trailing, declared, unknown] = result;
  t.is(announced.code, 8, announced.detail);
  t.regex(announced.detail, /the request message is 67108864 bytes; this web port forwards at most 4194304 \(PLATFORM_WEB_MAX_REQUEST_BYTES\)/);
  t.is(trailing.code, 3);
  t.regex(trailing.detail, /exactly one frame of 1024 bytes; more bytes followed it/);
  t.is(declared.code, 8);
  t.is(unknown.code, 12);
  t.regex(unknown.detail, /RobotService\/Nope: no such method/);
  for (const reply of [announced, trailing, unknown]) t.true(reply.sent < 32 * MiB, `${reply.sent} bytes went out before the refusal`);
  const growth = peak - before;
  t.log(`RSS ${Math.round(before / MiB)} MiB before, peak ${Math.round(peak / MiB)} MiB (${Math.round(growth / MiB)} MiB growth)`);
  t.true(growth < 32 * MiB, `the runtime grew by ${Math.round(growth / MiB)} MiB`);
  await readingsWork(t);
});

test.serial('a 256 KiB resource name gets a short NOT_FOUND, and the page’s next calls still work', async (t) => {
  const name = 'n'.repeat(256 * 1024);
  const refused = await grpcWebCall(url, READINGS, GetReadingsRequest.encode({ name }).finish());
  t.is(refused.code, 5, refused.detail);
  t.true(refused.detail.length < 400, `${refused.detail.length} characters`);
  t.regex(refused.detail, /n… \(\d+ more characters\)/);
  // Several in a row, then ordinary calls: the shared channel of the forwarder still answers.
  await Promise.all([1, 2, 3].map(() => grpcWebCall(url, READINGS, GetReadingsRequest.encode({ name: `${name}x` }).finish())));
  await readingsWork(t);
  await readingsWork(t);
});

test.serial('requests naming another Host or Origin are refused with 403 before anything runs; SaveConfig and StopAll included', async (t) => {
  const configBefore = readFileSync(runtime.configPath, 'utf8');
  const port = new URL(url).port;
  const rebind = { host: `rebind.attacker.example:${port}` };
  const save = await grpcWebCall(
    url,
    '/platform.robot.v1.RobotService/SaveConfig',
    SaveConfigRequest.encode({ configJson: '{"components":[]}' }).finish(),
    rebind,
  );
  t.is(save.httpStatus, 403);
  t.regex(save.body.toString(), /Host "rebind\.attacker\.example:\d+" is not a name of this web port; add the name to PLATFORM_WEB_ALLOWED_HOSTS/);
  const stop = await grpcWebCall(url, '/platform.robot.v1.RobotService/StopAll', StopAllRequest.encode({}).finish(), rebind);
  t.is(stop.httpStatus, 403);
  const fromElsewhere = await grpcWebCall(url, '/platform.robot.v1.RobotService/StopAll', StopAllRequest.encode({}).finish(), {
    origin: 'http://rebind.attacker.example',
  });
  t.is(fromElsewhere.httpStatus, 403);
  t.regex(fromElsewhere.body.toString(), /Origin "http:\/\/rebind\.attacker\.example" is not a page of this web port/);
  t.is(readFileSync(runtime.configPath, 'utf8'), configBefore, 'nothing was saved');
  t.is((await fetch(url)).status, 200);

  // The names it answers to: loopback, addresses, its bind host, network.web_allowed_hosts, PLATFORM_WEB_ALLOWED_HOSTS.
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `robot.example:${port}`, `bench.example:${port}`]) {
    const reply = await grpcWebCall(url, READINGS, GetReadingsRequest.encode({ name: 'thermo' }).finish(), { host, origin: `http://${host}` });
    t.is(reply.code, 0, `${host}: ${reply.httpStatus} ${reply.body.toString()}`);
  }
});

test.serial('the page and every answer forbid framing', async (t) => {
  const page = await fetch(url);
  t.is(page.headers.get('content-security-policy'), "frame-ancestors 'none'");
  t.is(page.headers.get('x-frame-options'), 'DENY');
  const call = await grpcWebCall(url, READINGS, GetReadingsRequest.encode({ name: 'thermo' }).finish());
  t.is(call.headers['x-frame-options'], 'DENY');
});
