// The provisioning gRPC service with a real grpc-js client: status (errors cleared once read), the
// network list sorted by signal, a network submitted becomes a profile with its priority and is joined,
// bad input is INVALID_ARGUMENT naming the field, credentials are stored with mode 0600, and
// ExitProvisioning ends provisioning. Every call counts as user activity.
import test from 'ava';
import { credentials as grpcCredentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Logger } from '../agent-log.js';
import { parseAgentConfig } from '../../config/agent-config.js';
import { ProvisioningServiceClient } from '../../../gen/platform/provisioning/v1/provisioning.js';
import { FakeClock } from '../testing/fake-clock.js';
import { FakeNetworkBackend } from '../testing/fake-network.js';
import { FakeRunner } from '../testing/fake-runner.js';
import { NetworkSupervisor } from './network-supervisor.js';
import { ProvisioningService } from './provisioning-service.js';

async function setup(t: { teardown(fn: () => void | Promise<void>): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'provisioning-'));
  const backend = new FakeNetworkBackend();
  backend.addAir({ ssid: 'weak', signal: 20, psk: 'weak-password' });
  backend.addAir({ ssid: 'strong', signal: 95, psk: 'strong-password' });
  backend.addAir({ ssid: 'mid', signal: 60, security: 'open' });
  const clock = new FakeClock();
  const config = parseAgentConfig({
    network_configuration: { offline_before_starting_hotspot_minutes: 0, manufacturer: 'Acme', model: 'Rover', fragment_id: 'frag-1' },
  });
  const network = new NetworkSupervisor({
    backend,
    clock,
    runner: new FakeRunner(),
    logger: new Logger('silent'),
    minutes: (n) => n * 60_000,
    checkIntervalMs: 15_000,
  });
  await network.configure(config);
  network.start();
  await clock.advance(15_000);
  const saved = { count: 0 };
  const credentialsFile = join(dir, 'platform.json');
  const service = new ProvisioningService({
    network,
    backend,
    config: () => config,
    credentialsFile,
    logger: new Logger('silent'),
    credentialsSaved: () => void saved.count++,
  });
  const port = await service.listen('127.0.0.1', 0);
  const client = new ProvisioningServiceClient(`127.0.0.1:${port}`, grpcCredentials.createInsecure());
  t.teardown(async () => {
    client.close();
    await service.close();
    await network.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const call = <Req, Res>(name: string, req: Req): Promise<Res> =>
    promisify((client as unknown as Record<string, (r: Req, cb: (e: ServiceError | null, res: Res) => void) => void>)[name].bind(client))(req);
  return { backend, clock, network, credentialsFile, saved, call, client };
}

test('status, the network list by signal, and errors cleared once read', async (t) => {
  const { network, call } = await setup(t);
  t.is(network.state, 'provisioning');
  const list = await call<object, { networks: { ssid: string; signal: number; security: string }[] }>('getNetworkList', {});
  t.deepEqual(
    list.networks.map((n) => [n.ssid, n.signal, n.security]),
    [
      ['strong', 95, 'wpa-psk'],
      ['mid', 60, 'open'],
      ['weak', 20, 'wpa-psk'],
    ],
  );
  network.errors.push('weak: secrets were required, but not provided');
  const status1 = await call<object, Record<string, unknown>>('getSmartMachineStatus', {});
  t.like(status1, { provisioningInfo: { fragmentId: 'frag-1', model: 'Rover', manufacturer: 'Acme' }, hasSmartMachineCredentials: false, isOnline: false });
  t.deepEqual(status1.errors, ['weak: secrets were required, but not provided']);
  t.deepEqual((await call<object, Record<string, unknown>>('getSmartMachineStatus', {})).errors, [], 'read once');
});

test('SetNetworkCredentials: bad input is INVALID_ARGUMENT naming the field; a good network becomes a profile with its priority and is joined', async (t) => {
  const { backend, clock, network, call } = await setup(t);
  const bad = async (req: object, message: string) => {
    const err = await t.throwsAsync<ServiceError>(() => call('setNetworkCredentials', req));
    t.is(err?.code, status.INVALID_ARGUMENT);
    t.true(err?.details.includes(message), err?.details);
  };
  await bad({ type: 'wifi', ssid: 'x'.repeat(33), psk: 'strong-password', priority: 0 }, 'ssid: must be at most 32 bytes (is 33)');
  await bad({ type: 'wifi', ssid: 'strong', psk: 'strong-password', priority: 1000 }, 'priority: must be an integer between -999 and 999 (is 1000)');
  await bad({ type: 'wired', ssid: 'strong', psk: '', priority: 0 }, 'type: must be "wifi"');
  t.is(network.state, 'provisioning');
  await call('setNetworkCredentials', { type: 'wifi', ssid: 'strong', psk: 'strong-password', priority: 30 });
  t.like(backend.store.get('platform-user-strong'), { ssid: 'strong', priority: 30 });
  t.is(backend.active, 'platform-user-strong');
  await clock.advance(15_000);
  t.is(network.state, 'online');
});

test('SetSmartMachineCredentials stores them with mode 0600; a part without a secret is refused', async (t) => {
  const { credentialsFile, saved, call } = await setup(t);
  const err = await t.throwsAsync<ServiceError>(() => call('setSmartMachineCredentials', { cloud: { id: 'part-1', secret: '', appAddress: 'https://c:443' } }));
  t.is(err?.code, status.INVALID_ARGUMENT);
  t.regex(err?.details ?? '', /^credentials: cloud\.secret/);
  await call('setSmartMachineCredentials', { cloud: { id: 'part-1', secret: 's3cret', appAddress: 'https://c:443' } });
  t.deepEqual(JSON.parse(readFileSync(credentialsFile, 'utf8')), { cloud: { app_address: 'https://c:443', id: 'part-1', secret: 's3cret' } });
  t.is(statSync(credentialsFile).mode & 0o777, 0o600);
  await new Promise((r) => setImmediate(r));
  t.is(saved.count, 1);
  t.true((await call<object, Record<string, unknown>>('getSmartMachineStatus', {})).hasSmartMachineCredentials as boolean);
});

test('ExitProvisioning ends provisioning; calls count as user activity', async (t) => {
  const { backend, clock, network, call } = await setup(t);
  await clock.advance(9.5 * 60_000);
  await call('getNetworkList', {}); // minute 9.5: the user is active, so the 10-minute retry waits
  await clock.advance(1 * 60_000);
  t.is(network.state, 'provisioning');
  await call('exitProvisioning', {});
  t.not(network.state, 'provisioning');
  t.true(backend.ops.includes('deactivate platform-hotspot'));
});

test('an error echoing a 128 KiB input is sent bounded, and the next call on the same connection works', async (t) => {
  const { client } = await setup(t);
  const within = { deadline: Date.now() + 20_000 };
  const err = await new Promise<ServiceError | null>((resolve) =>
    client.setNetworkCredentials({ type: 'x'.repeat(128 * 1024), ssid: 'strong', psk: 'strong-password', priority: 0 }, new Metadata(), within, (e) =>
      resolve(e),
    ),
  );
  // Unbounded, the status' header block passed 64 KiB and the client stopped reading: DEADLINE_EXCEEDED.
  t.is(err?.code, status.INVALID_ARGUMENT, err?.details);
  t.regex(err!.details, /^type: must be "wifi" \(is "x+…/);
  t.true(err!.details.length < 300);
  const ok = await new Promise<ServiceError | null>((resolve) =>
    client.getSmartMachineStatus({}, new Metadata(), { deadline: Date.now() + 20_000 }, (e) => resolve(e)),
  );
  t.is(ok, null);
});
