// RobotService's logs and config RPCs against the real platform-server, with an ordinary gRPC client (what
// grpcurl and the control page use): StreamLogs' backlog, live lines and level filter; GetConfig with a
// rejected save's errors; SaveConfig refusing a bad config and durably saving a good one, which the file
// watcher then applies; and an online machine's config, which is read-only here.
import test from 'ava';
import { status, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RobotServiceClient, type LogLine } from '../../gen/platform/robot/v1/robot.js';
import { call, insecure } from './testing/grpc.js';
import { eventually, spawnRuntime } from './testing/spawn-runtime.js';

const sensor = (name: string) => ({ name, api: 'core:component:sensor', model: 'fake', attributes: { readings: { t: 1 } } });

/** Collects a StreamLogs call's lines until the test cancels it. */
function follow(client: RobotServiceClient, request: { minLevel?: string; backlog?: number }) {
  const lines: LogLine[] = [];
  // Every field given: the generated client encodes the message as it is, without defaults.
  const stream = client.streamLogs({ minLevel: '', backlog: 0, ...request });
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    stream.on('error', (err: ServiceError) => resolve(err));
    stream.on('end', () => resolve(undefined));
  });
  stream.on('data', (r: { lines: LogLine[] }) => lines.push(...r.lines));
  return { lines, ended, cancel: () => stream.cancel() };
}

test('StreamLogs sends the recent lines, then new ones live, filtered by level; a bad level is refused naming min_level', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor('a')] });
  t.teardown(() => runtime.stop());
  const client = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => client.close());

  const all = follow(client, { backlog: 100 });
  const errors = follow(client, { minLevel: 'error', backlog: 100 });
  t.teardown(() => {
    all.cancel();
    errors.cancel();
  });
  // The backlog: the start-up lines logged before anyone asked.
  const serving = await eventually(
    async () => all.lines.find((l) => l.message === 'serving'),
    (l) => l !== undefined,
  );
  t.is(serving!.level, 'info');
  t.is(serving!.loggerName, 'platform.server');
  t.is(serving!.fields?.address, runtime.address);
  t.true(serving!.time instanceof Date);

  // New lines, as they are logged: a saved change (info) and a rejected one (error).
  runtime.writeConfig({ components: [sensor('a'), sensor('b')] });
  await eventually(async () => all.lines.some((l) => l.message === 'reconfigured'), Boolean);
  runtime.writeConfig({ components: 'not a list' });
  const rejected = await eventually(
    async () => errors.lines.find((l) => l.message === 'the saved config is invalid; still running the previous one'),
    (l) => l !== undefined,
  );
  t.is(rejected!.level, 'error');
  t.deepEqual(rejected!.fields?.errors, ['components "not a list": must be an array of resource entries']);
  t.true(all.lines.some((l) => l.message === rejected!.message));
  t.deepEqual(
    errors.lines.filter((l) => l.level !== 'error'),
    [],
    'the error stream holds error lines only',
  );
  t.false(errors.lines.some((l) => l.message === 'serving'));

  // No backlog asked: only what comes next.
  const fresh = follow(client, { backlog: 0 });
  t.teardown(() => fresh.cancel());
  runtime.writeConfig({ components: [sensor('a')] });
  await eventually(async () => fresh.lines.some((l) => l.message === 'reconfigured'), Boolean);
  t.false(fresh.lines.some((l) => l.message === 'serving'));

  const bad = await follow(client, { minLevel: 'loud' }).ended;
  t.is(bad?.code, status.INVALID_ARGUMENT);
  t.regex(bad!.details, /^min_level: must be one of debug, info, warn, error .*"loud"/);
  const big = await follow(client, { backlog: 1_000_000 }).ended;
  t.is(big?.code, status.INVALID_ARGUMENT);
  t.regex(big!.details, /^backlog: must be at most/);
});

test('GetConfig shows the running config and a rejected save; SaveConfig refuses a bad config and durably saves a good one, which the machine applies', async (t) => {
  const runtime = await spawnRuntime({ components: [sensor('a')] });
  t.teardown(() => runtime.stop());
  const client = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => client.close());
  const get = () => call(client, 'getConfig', {});
  const names = async () => ((await call(client, 'resourceNames', {})).resources as { name: string }[]).map((r) => r.name).sort();

  const first = await get();
  t.is(first.source, 'file');
  t.is(first.path, runtime.configPath);
  t.is(first.editHint, '');
  t.is(first.revision, 1);
  t.deepEqual(first.errors, []);
  t.deepEqual(first.resourceErrors, []);
  t.deepEqual(JSON.parse(first.configJson).components, [sensor('a')]);

  // A bad config is not saved: the reply names each path and rule; the file and the machine are as they were.
  const before = readFileSync(runtime.configPath, 'utf8');
  const bad = await call(client, 'saveConfig', { configJson: JSON.stringify({ components: [], session: { heartbeat_window: 'soon' }, colour: 'red' }) });
  t.false(bad.saved);
  t.deepEqual((bad.errors as { path: string; rule: string }[]).map((e) => e.path).sort(), ['', 'session.heartbeat_window']);
  t.true((bad.errors as { rule: string }[]).some((e) => /colour/.test(e.rule)));
  t.is(readFileSync(runtime.configPath, 'utf8'), before);
  const notJson = await call(client, 'saveConfig', { configJson: '{"components": [' });
  t.false(notJson.saved);
  t.is(notJson.errors[0].path, 'config_json');

  // A good config is saved; the file watcher applies it as for any save.
  const next = { components: [sensor('a'), sensor('b')], network: { bind_address: runtime.address } };
  t.deepEqual(await call(client, 'saveConfig', { configJson: JSON.stringify(next) }), { saved: true, errors: [] });
  t.deepEqual(JSON.parse(readFileSync(runtime.configPath, 'utf8')), next);
  t.deepEqual(await eventually(names, (n) => n.length === 2), ['a', 'b']);
  const second = await eventually(get, (c) => c.revision === 2);
  t.deepEqual(JSON.parse(second.configJson), next);

  // A resource entry's error does not stop a save (the runtime runs the other resources); GetConfig lists it.
  const withBadEntry = { ...next, components: [...next.components, { name: 'x', api: 'core:component:sensor', model: 'nope' }] };
  t.true((await call(client, 'saveConfig', { configJson: JSON.stringify(withBadEntry) })).saved);
  const third = await eventually(get, (c) => c.revision === 3);
  t.deepEqual(
    third.resourceErrors.map((e: { path: string; rule: string }) => [e.path, e.rule.replace(/;.*/, '')]),
    [['components[2].model', 'unknown model for core:component:sensor']],
  );
  t.deepEqual(third.errors, []);

  // A save the runtime rejects (here, by an editor) is listed with its path and rule; the old config runs on.
  runtime.writeConfig({ components: [sensor('a')], debug: 'very' });
  const rejected = await eventually(get, (c) => c.errors.length > 0);
  t.deepEqual(rejected.errors, [{ path: 'debug', rule: 'must be true or false', message: 'debug "very": must be true or false' }]);
  t.is(rejected.revision, 3);
  t.deepEqual(await names(), ['a', 'b', 'x']);
});

test("an online machine's config comes from the cloud: GetConfig says where to edit it, and SaveConfig refuses", async (t) => {
  const runtime = await spawnRuntime(
    { cloud: { id: 'part-1', secret: 'not-shown', app_address: 'http://localhost:1' } },
    { env: { PLATFORM_ONLINE_DIR: mkdtempSync(join(tmpdir(), 'platform-online-')) } },
  );
  t.teardown(() => runtime.stop());
  const client = new RobotServiceClient(runtime.address, insecure());
  t.teardown(() => client.close());
  const config = await call(client, 'getConfig', {});
  t.is(config.source, 'cloud');
  t.is(config.path, runtime.configPath);
  t.regex(config.editHint, /online: its config comes from the cloud \(part part-1 at http:\/\/localhost:1\); edit it there/);
  t.false(config.configJson.includes('not-shown'), 'the part secret is never shown');
  const refused = await t.throwsAsync(call(client, 'saveConfig', { configJson: '{}' }));
  t.is((refused as ServiceError).code, status.FAILED_PRECONDITION);
  t.regex((refused as ServiceError).details, /^config_json: cannot be saved on this machine: this machine is online/);
});
