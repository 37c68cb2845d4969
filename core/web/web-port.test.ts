// The web port of the real platform-server: -shareddir, -webprofile, and gRPC-Web answers for calls that
// cannot succeed (the successful ones are exercised by the browser test).
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frame } from '../serving/web/grpc-web.js';
import { spawnRuntime } from '../server/testing/spawn-runtime.js';
import { webUrlOf } from '../serving/testing/chromium.js';

const components = [{ name: 'thermo', api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } }];

function trailersOf(body: Buffer): string {
  for (let at = 0; at + 5 <= body.length;) {
    const length = body.readUInt32BE(at + 1);
    if (body[at] === 0x80) return body.subarray(at + 5, at + 5 + length).toString();
    at += 5 + length;
  }
  return '';
}

async function grpcWeb(url: string, path: string, body: Buffer): Promise<string> {
  const res = await fetch(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/grpc-web+proto' }, body });
  return trailersOf(Buffer.from(await res.arrayBuffer()));
}

test('-shareddir serves the page from the folder, never outside it; -webprofile returns a .cpuprofile; neither is "not supported"', async (t) => {
  const shared = mkdtempSync(join(tmpdir(), 'platform-shared-'));
  writeFileSync(join(shared, 'index.html'), '<p>my own page</p>');
  const runtime = await spawnRuntime({ components }, { args: ['-shareddir', shared, '-webprofile'] });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  const index = await fetch(url);
  t.is(index.status, 200);
  t.is(index.headers.get('content-type'), 'text/html; charset=utf-8');
  t.is(await index.text(), '<p>my own page</p>');
  t.is((await fetch(new URL('/nothing.js', url))).status, 404);
  // fetch normalises `..` segments, so the escape hides its slashes as %2F.
  t.is((await fetch(new URL('/..%2F..%2F..%2Fetc%2Fpasswd', url))).status, 403);

  const profile = await fetch(new URL('/debug/profile?seconds=1', url));
  t.is(profile.status, 200);
  const parsed = (await profile.json()) as { nodes: unknown[]; startTime: number; endTime: number };
  t.true(parsed.nodes.length > 0);
  t.true(parsed.endTime - parsed.startTime >= 1e6, 'covers the second asked for (microseconds)');
  const bad = await fetch(new URL('/debug/profile?seconds=abc', url));
  t.is(bad.status, 400);
  t.regex(await bad.text(), /^seconds: must be a number above 0 and at most 300, got "abc"/);
  t.false(runtime.output().includes('not supported'), runtime.output());
});

test('without -webprofile there is no profile endpoint; gRPC-Web names unknown methods and malformed bodies', async (t) => {
  const runtime = await spawnRuntime({ components });
  t.teardown(() => runtime.stop());
  const url = webUrlOf(runtime.output());
  t.is((await fetch(new URL('/debug/profile?seconds=1', url))).status, 404);
  t.regex(
    await grpcWeb(url, '/platform.robot.v1.RobotService/Nope', frame(0, Buffer.alloc(0))),
    /grpc-status: 12\r\ngrpc-message: %2Fplatform.robot.v1.RobotService%2FNope%3A%20no%20such%20method/,
  );
  t.regex(await grpcWeb(url, '/platform.robot.v1.RobotService/GetVersion', Buffer.from([0, 0])), /grpc-status: 3\r\n/);
  // A real RPC's error comes back as the runtime's own status and message.
  const missing = await grpcWeb(url, '/platform.component.sensor.v1.SensorService/GetReadings', frame(0, Buffer.from([0x0a, 0x04, ...Buffer.from('nope')])));
  t.regex(missing, /grpc-status: 5\r\n/);
  t.regex(decodeURIComponent(missing), /nope/);
  const version = await fetch(new URL('/platform.robot.v1.RobotService/GetVersion', url), {
    method: 'POST',
    headers: { 'content-type': 'application/grpc-web+proto' },
    body: frame(0, Buffer.alloc(0)),
  });
  const bytes = Buffer.from(await version.arrayBuffer());
  t.is(bytes[0], 0, 'a data frame first');
  t.regex(trailersOf(bytes), /grpc-status: 0\r\n/);
});

test('a taken web port leaves the runtime serving gRPC, without a web line, and logs the fix', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as AddressInfo).port;
  const runtime = await spawnRuntime({ components, network: { bind_address: 'localhost:0', web_bind_address: `127.0.0.1:${port}` } });
  t.teardown(() => runtime.stop());
  t.false(runtime.output().includes('platform-server web page on'), runtime.output());
  const error = runtime.logs().find((l) => l.msg === 'no web page: its port cannot be bound; set network.web_bind_address to a free host:port') as
    { error: string } | undefined;
  t.regex(error?.error ?? '', new RegExp(`127.0.0.1:${port}`));
});
