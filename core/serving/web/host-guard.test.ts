// Which names a web port answers to (issue 27, finding 10: DNS rebinding).
import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { HostGuard, hostOf, originHostOf } from './host-guard.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

test('Host and Origin headers are read down to their host', (t) => {
  t.is(hostOf('localhost:8081'), 'localhost');
  t.is(hostOf('[::1]:8081'), '[::1]');
  t.is(hostOf('robot.example'), 'robot.example');
  t.is(hostOf('a@b:1'), undefined);
  t.is(hostOf('a b'), undefined);
  t.is(originHostOf('http://127.0.0.1:8082'), '127.0.0.1');
  t.is(originHostOf('null'), undefined);
  t.is(originHostOf('file:///etc/passwd'), undefined);
});

test('loopback names, any IP address, this machine and the configured names are allowed; other names are not', (t) => {
  const guard = new HostGuard(['Robot.Example.', ''], { PLATFORM_WEB_ALLOWED_HOSTS: 'a.example, b.example' });
  for (const name of [
    'localhost',
    'app.localhost',
    '127.0.0.1',
    '10.1.2.3',
    '[::1]',
    '[fe80::1]',
    'robot.example',
    'ROBOT.example',
    'a.example',
    'b.example',
    hostname(),
    `${hostname()}.local`,
  ]) {
    t.true(guard.allows(name), name);
  }
  for (const name of ['rebind.attacker.example', 'localhost.attacker.example', '127.0.0.1.nip.io', 'example']) t.false(guard.allows(name), name);
  t.true(new HostGuard([], { PLATFORM_WEB_ALLOWED_HOSTS: '*' }).allows('anything.example'));
});

test('a request is refused naming the header, its value and the setting to change', (t) => {
  const guard = new HostGuard([], {});
  t.is(guard.refusal(req({ host: 'localhost:1' })), undefined);
  t.is(guard.refusal(req({ host: 'localhost:1', origin: 'http://localhost:1' })), undefined);
  t.regex(guard.refusal(req({}))!, /no Host header/);
  t.regex(
    guard.refusal(req({ host: 'rebind.attacker.example:1' }))!,
    /^Host "rebind\.attacker\.example:1" is not a name of this web port; add the name to PLATFORM_WEB_ALLOWED_HOSTS/,
  );
  t.regex(guard.refusal(req({ host: 'localhost:1', origin: 'http://evil.example' }))!, /^Origin "http:\/\/evil\.example" is not a page of this web port/);
  t.regex(guard.refusal(req({ host: 'localhost:1', origin: 'null' }))!, /^Origin "null"/);
  // An echoed header is bounded too.
  t.true(guard.refusal(req({ host: `${'h'.repeat(10_000)}.example` }))!.length < 400);
});
