// Admin commands in the scale-out mode (runner.ts with { backendStoreUri }): they act on PostgreSQL
// directly, whether or not servers run, and the servers' caches and streams hear of what they changed.
// A second PgStore on the same database stands for a running server process (its Authorizer and its
// config watchers). The embedded default (data dir, admin channel) is admin-cli.test.ts's.
import test from 'ava';
import { Metadata } from '@grpc/grpc-js';
import { agentExtension } from '../agent/extension.js';
import { Authorizer } from '../auth/authorizer.js';
import { TokenSigner } from '../auth/token.js';
import { createPartsExtension } from '../parts/extension.js';
import { partEvents } from '../parts/part-events.js';
import { storeChannels } from '../store/pg-notify.js';
import { sameDatabase } from '../testing/same-database.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { coreAdminActions } from './actions.js';
import { runAdminAction } from './runner.js';

const [, postgres] = tabularBackends(test);
const actions = { ...coreAdminActions, ...agentExtension.adminActions, ...createPartsExtension().adminActions };

test('postgres: admin commands act on the database with or without a server, and a running server hears of revocations and configs', async (t) => {
  const first = await postgres.open(t);
  const server = await sameDatabase(t, postgres, first);
  const [{ db }] = await server.query('SELECT current_database() AS db');
  const target = { backendStoreUri: postgres.lastUrl!.replace(/\/[^/]+$/, `/${String(db)}`) };
  const admin = (name: string, args: Record<string, unknown> = {}) => runAdminAction(target, name, args, actions) as Promise<Record<string, string>>;

  const org = await admin('org.create', { name: 'acme' });
  const loc = await admin('location.create', { org: org.id, name: 'lab' });
  const machine = await admin('machine.create', { org: org.id, name: 'rover', location: loc.id });
  const key = await admin('key.create', { org: org.id, role: 'owner' });
  // The "server" sees every row the commands wrote.
  t.deepEqual(await server.query('SELECT name FROM organizations'), [{ name: 'acme' }]);
  t.deepEqual(
    ((await admin('org.list')) as unknown as { id: string }[]).map((o) => o.id),
    [org.id],
  );

  // A running server with a key cached (for an hour: only the notification can change that).
  const tokens = await TokenSigner.forStore(server);
  const authorizer = new Authorizer(server, tokens, 3_600_000);
  const md = new Metadata();
  md.set('authorization', `Bearer ${tokens.sign(key.id, 'api-key')}`);
  t.is((await authorizer.authenticate(md)).kind, 'api-key');
  const watched = new Promise<number>((resolve) => partEvents(server).on('config', (partId, revision) => partId === machine.part_id && resolve(revision)));
  await storeChannels(server).ready();

  await admin('agent.config.set', { machine: machine.machine_id, config: { agent: { version_control: { agent: 'stable' } } } });
  t.is(await watched, 1, "the server's WatchConfig streams are told of the config the command saved");
  t.deepEqual(await admin('agent.config.get', { machine: machine.machine_id }), { agent: { version_control: { agent: 'stable' } } });
  const part = await admin('part.config.get', { part: machine.part_id });
  t.is(part.revision as unknown as number, 1);

  const revoked = new Promise<void>((resolve) => storeChannels(server).subscribe('platform_api_key', (id) => id === key.id && resolve()));
  await admin('key.revoke', { id: key.id });
  await revoked;
  await t.throwsAsync(authorizer.authenticate(md), { message: /no longer exists or was revoked/ });
  t.is(((await admin('key.list', { org: org.id })) as unknown as { status: string }[])[0].status, 'revoked');
  await t.throwsAsync(admin('key.revoke', { id: key.id }), { message: /already revoked/ });
});
