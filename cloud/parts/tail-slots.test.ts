// Hostile-tenant suite, issue 27 finding 7 (tails): one API key holds at most
// PLATFORM_LOG_MAX_TAILS_PER_KEY TailRobotPartLogs streams open; the next is RESOURCE_EXHAUSTED naming
// the limit, another key is not held back, and a tail that ends gives its slot back. 40 tails of one key
// that never read cost the cloud 464 ms of its thread on each new batch of the part's entries.
import test from 'ava';
import { status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { TailRobotPartLogsResponse } from '../../gen/platform/app/v1/robot_part.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { call, partClients, type PartClients } from './testing/part-clients.js';

let cloud: SpawnedCloud;
let partId: string;
let machine: PartClients;
let alice: PartClients;
let bob: PartClients;

test.before(async () => {
  cloud = await spawnCloud(undefined, [], { PLATFORM_LOG_MAX_TAILS_PER_KEY: '2' });
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'watchers']);
  const rover = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  partId = rover.part_id;
  machine = await partClients(cloud.address, { partId, secret: rover.part_secret });
  const key = async () =>
    partClients(cloud.address, (await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'operator'])) as { id: string; key: string });
  alice = await key();
  bob = await key();
});

test.after.always(async () => {
  for (const c of [machine, alice, bob]) c?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

/** A tail, and a promise of its first message (proof that the cloud holds it open) or its error. */
function tail(c: PartClients): { stream: ClientReadableStream<TailRobotPartLogsResponse>; first: Promise<TailRobotPartLogsResponse | ServiceError> } {
  const stream = c.app.tailRobotPartLogs({ id: partId, levels: [] }, c.md);
  const first = new Promise<TailRobotPartLogsResponse | ServiceError>((resolve) => {
    stream.once('data', resolve);
    stream.once('error', resolve);
  });
  return { stream, first };
}

const logLine = (message: string) =>
  call(machine.robot.log.bind(machine.robot), { id: partId, logs: [{ time: new Date(), level: 'info', loggerName: 'test', message, fields: {} }] }, machine.md);

/** Logs a line every 100 ms until `until` settles, so that open tails get a message. */
async function logUntil<T>(until: Promise<T>): Promise<T> {
  let done = false;
  void until.finally(() => (done = true));
  for (let i = 0; !done && i < 300; i++) {
    await logLine(`line ${i}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return until;
}

test.serial('a key past its open tails is RESOURCE_EXHAUSTED naming the limit; another key is not; a closed tail frees its slot', async (t) => {
  const a1 = tail(alice);
  const a2 = tail(alice);
  t.falsy('code' in (await logUntil(a1.first)));
  t.falsy('code' in (await logUntil(a2.first)));
  const a3 = tail(alice);
  const refused = (await logUntil(a3.first)) as ServiceError;
  t.is(refused.code, status.RESOURCE_EXHAUSTED);
  t.regex(refused.details, /API key \S+ .* already has 2 TailRobotPartLogs streams open, the limit \(PLATFORM_LOG_MAX_TAILS_PER_KEY\); close one first/);
  const b1 = tail(bob);
  t.falsy('code' in (await logUntil(b1.first)));
  a1.stream.cancel();
  // The cloud frees the slot once it sees the cancellation: a new tail of alice's opens then.
  let reopened: ServiceError | TailRobotPartLogsResponse = refused;
  for (let i = 0; i < 50 && 'code' in reopened; i++) {
    const again = tail(alice);
    reopened = await logUntil(again.first);
    if ('code' in reopened) t.is((reopened as ServiceError).code, status.RESOURCE_EXHAUSTED);
    else again.stream.cancel();
  }
  t.falsy('code' in reopened, 'a tail of alice opens after one of hers was closed');
  for (const s of [a2, b1]) s.stream.cancel();
});
