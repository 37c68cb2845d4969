// OnlineConfig against a scripted cloud link: what an online runtime serves (the cloud's config, with
// this machine's own `network` and `cloud` sections), what it says when it has nothing to serve, and
// that a local full config never goes through it.
import test from 'ava';
import { mock } from 'node:test';
import { PassThrough } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigResponse } from '../../gen/platform/app/v1/robot_part.js';
import { ConfigFile } from '../config/config-file.js';
import { LogSink, type SinkRecord } from '../logging/sink.js';
import { CredentialsRefusedError, type CloudLink } from '../cloud-link/cloud-link.js';
import { ConfigCache, onlineDir } from './config-cache.js';
import { OnlineConfig, RETRY_MAX_MS } from './online-config.js';
import { OnlineMachine } from './online-machine.js';

const creds = { id: 'part-1', secret: 's3cret', app_address: '127.0.0.1:8081' };
const sensor = { name: 'thermometer', api: 'core:component:sensor', model: 'fake', attributes: { readings: { celsius: 21 } } };

function folder(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'online-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function fileWith(dir: string, content: unknown): ConfigFile {
  const path = join(dir, 'credentials.json');
  writeFileSync(path, JSON.stringify(content));
  return new ConfigFile(path);
}

/** A link whose Config call answers `answer` (or fails with it). */
function link(answer: ConfigResponse | Error): CloudLink {
  return {
    partId: creds.id,
    appAddress: creds.app_address,
    robot: { config: () => undefined },
    unary: () => (answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer)),
  } as unknown as CloudLink;
}

async function logger() {
  const lines: SinkRecord[] = [];
  const sink = await LogSink.create({ destination: new PassThrough().resume(), deduplicate: false });
  sink.tap((record) => lines.push(record));
  return { log: sink.logger('platform.online', () => 'debug'), lines, sink };
}

test("the served config is the cloud's, with the credentials file's cloud and network sections", async (t) => {
  const dir = folder(t);
  const file = fileWith(dir, { cloud: creds, network: { bind_address: '127.0.0.1:0' } });
  const { log } = await logger();
  // The cloud's stored config never holds `cloud`; a stray one (an old cache) must not win either.
  const stored = { components: [sensor], network: { bind_address: '0.0.0.0:9999' }, cloud: { id: 'someone-else', secret: 'x' } };
  const online = new OnlineConfig(file, link({ revision: 3, config: stored, partName: 'rover-main' }), new ConfigCache(dir, creds.id), log);
  await online.init();
  const served = online.read();
  t.deepEqual((served.raw as Record<string, unknown>).cloud, creds);
  t.deepEqual((served.raw as Record<string, unknown>).network, { bind_address: '127.0.0.1:0' });
  t.is(served.config.cloud?.id, 'part-1');
  t.is(served.config.cloud?.secret, 's3cret');
  t.is(served.config.cloud?.app_address, '127.0.0.1:8081');
  t.deepEqual(
    served.config.components.map((c) => (c as { name: string }).name),
    ['thermometer'],
  );
  t.is(JSON.parse(served.text).cloud.id, 'part-1');
  t.is(online.problem(), undefined);
  t.is(online.revision, 3);
});

test('when the link was refused (plaintext credentials to a remote host) the served config carries no cloud section', async (t) => {
  const dir = folder(t);
  const file = fileWith(dir, { cloud: { ...creds, app_address: '10.1.2.3:8081' } });
  // A config cached by an earlier run that was allowed to talk to the cloud.
  await new ConfigCache(dir, creds.id).write({ partId: creds.id, revision: 2, config: { components: [sensor] } });
  const { log, lines } = await logger();
  const refusal = 'refusing to send the machine credentials in plaintext to 10.1.2.3, which is not a loopback address: pass -allow-insecure-creds';
  const online = new OnlineConfig(file, undefined, new ConfigCache(dir, creds.id), log, refusal);
  await online.init();
  const served = online.read();
  t.false('cloud' in (served.raw as Record<string, unknown>));
  t.is(served.config.cloud, undefined);
  t.deepEqual(
    served.config.components.map((c) => (c as { name: string }).name),
    ['thermometer'],
  );
  t.true(lines.some((l) => l.level === 'error' && l.message === refusal));
});

test('with no cache and an unreachable cloud nothing is served, and the problem says why and where the cache would be', async (t) => {
  const dir = folder(t);
  const file = fileWith(dir, { cloud: creds });
  const { log, lines } = await logger();
  const cache = new ConfigCache(dir, creds.id);
  const online = new OnlineConfig(file, link(new Error('14 UNAVAILABLE: No connection established')), cache, log);
  await online.init();
  t.deepEqual(online.read().config.components, []);
  t.is(online.revision, 0);
  t.is(
    online.problem(),
    `no machine config: the cloud at 127.0.0.1:8081 is unreachable (14 UNAVAILABLE: No connection established); there is no cached config at ${cache.path}; retrying`,
  );
  t.true(lines.some((l) => l.level === 'warn' && l.message === 'cannot reach the cloud; retrying in 1 s' && l.fields?.app_address === '127.0.0.1:8081'));
});

test('with a cache and an unreachable cloud the cached revision is served without a problem', async (t) => {
  const dir = folder(t);
  const file = fileWith(dir, { cloud: creds });
  const cache = new ConfigCache(dir, creds.id);
  await cache.write({ partId: creds.id, revision: 5, config: { components: [sensor] } });
  const { log } = await logger();
  const online = new OnlineConfig(file, link(new Error('14 UNAVAILABLE')), cache, log);
  await online.init();
  t.is(online.revision, 5);
  t.deepEqual(
    online.read().config.components.map((c) => (c as { name: string }).name),
    ['thermometer'],
  );
  t.is(online.problem(), undefined);
});

test('a cloud that holds no config yet: nothing is served and the problem says how to save one', async (t) => {
  const dir = folder(t);
  const { log } = await logger();
  const online = new OnlineConfig(
    fileWith(dir, { cloud: creds }),
    link({ revision: 0, config: {}, partName: 'rover-main' }),
    new ConfigCache(dir, creds.id),
    log,
  );
  await online.init();
  t.deepEqual(online.read().config.components, []);
  t.is(online.problem(), 'no machine config: the cloud holds no config for part part-1 yet; save one with UpdateRobotPart or platform-cloud part config set');
});

test('a fetched revision is cached durably, readable by this user only, before it is served', async (t) => {
  t.is(onlineDir({}), join(homedir(), '.platform', 'online'));
  t.is(onlineDir({ PLATFORM_ONLINE_DIR: '/srv/online' }), '/srv/online');
  const dir = folder(t);
  const { log } = await logger();
  const cache = new ConfigCache(dir, creds.id);
  const time = new Date('2026-11-24T03:00:00Z');
  const online = new OnlineConfig(
    fileWith(dir, { cloud: creds }),
    link({ revision: 7, time, config: { components: [sensor] }, partName: 'rover-main' }),
    cache,
    log,
  );
  await online.init();
  t.deepEqual(JSON.parse(readFileSync(cache.path, 'utf8')), {
    partId: creds.id,
    revision: 7,
    time: time.toISOString(),
    config: { components: [sensor] },
    partName: 'rover-main',
  });
  t.is(online.partName, 'rover-main', 'the part name comes with the revision');
  t.is(new OnlineConfig(fileWith(dir, { cloud: creds }), link(new Error('offline')), cache, log).partName, undefined, 'known only once read');
  t.is(statSync(cache.path).mode & 0o777, 0o600);
  // A damaged cache is ignored (then refetched), never served half-read.
  writeFileSync(cache.path, '{"partId": "part-1", "revis');
  t.is(cache.read(), undefined);
});

test('a local full config is not an online machine: it is served as written, its own cloud section included', async (t) => {
  const dir = folder(t);
  const local = { cloud: { ...creds, app_address: '10.9.9.9:8081' }, components: [sensor] };
  const file = fileWith(dir, local);
  const { sink } = await logger();
  t.is(OnlineMachine.forFile(file, sink, { allowInsecureCreds: false, env: { PLATFORM_ONLINE_DIR: dir } }), undefined);
  t.deepEqual(file.read().raw, local);
  // Credentials alone (optionally with network) are an online machine.
  const online = OnlineMachine.forFile(fileWith(dir, { cloud: creds, network: { bind_address: '127.0.0.1:0' } }), sink, {
    allowInsecureCreds: false,
    env: { PLATFORM_ONLINE_DIR: dir },
  });
  t.truthy(online);
  await online?.close();
});

test.serial('a refused secret is retried with exponential backoff up to the maximum, logged at error level each time, never thrown', async (t) => {
  const dir = folder(t);
  const { log, lines } = await logger();
  let attempts = 0;
  const refused = new CredentialsRefusedError(
    Object.assign(new Error('16 UNAUTHENTICATED: wrong secret'), { code: 16, details: 'wrong secret', metadata: undefined as never }),
  );
  const refusing = {
    ...link(refused),
    metadata: () => {
      attempts++;
      return Promise.reject(refused);
    },
    refused: () => undefined,
  } as unknown as CloudLink;
  mock.timers.enable({ apis: ['setTimeout'] });
  t.teardown(() => mock.timers.reset());
  // No jitter (reconnect.ts): the waits are the doubling values themselves.
  const online = new OnlineConfig(fileWith(dir, { cloud: creds }), refusing, new ConfigCache(dir, creds.id), log, undefined, () => 0);
  await online.init();
  await online.watch(() => t.fail('no config may be applied'));
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  const waits: number[] = [];
  await settle();
  t.is(attempts, 0, 'the follower waits the 1 s that init() announced before its first attempt');
  for (let i = 0; i < 7; i++) {
    await settle();
    const last = lines[lines.length - 1];
    const m = /; retrying in (\d+(?:\.\d+)?) s$/.exec(last.message);
    t.truthy(m, last.message);
    t.is(last.level, 'error');
    t.regex(last.message, /^the cloud refused the machine credentials \(wrong part secret or API key\?\): wrong secret/);
    waits.push(Number(m![1]));
    mock.timers.tick(Number(m![1]) * 1000);
  }
  t.deepEqual(waits, [1, 2, 4, 8, 10, 10, 10]);
  t.true(attempts >= 6);
  t.regex(online.problem()!, /^no machine config: the cloud refused the machine credentials/);
  t.is(RETRY_MAX_MS, 10_000);
  const closing = online.close();
  await settle();
  await closing;
});
