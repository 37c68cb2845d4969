// Hostile-tenant suite, issue 27 finding 7 (logs): one writer, and one organization, may upload log
// entries only so fast (PLATFORM_LOG_MAX_BYTES_PER_S, PLATFORM_LOG_MAX_BYTES_PER_S_PER_ORG). A machine
// part sending 10,000-entry batches in a loop held the cloud's thread and DuckDB's writers, and other
// organizations' reads waited. LogRate with an injected clock, then the real platform-cloud.
import test from 'ava';
import { Client, credentials, status, type Metadata, type ServiceError } from '@grpc/grpc-js';
import type { LogEntry } from '../../gen/platform/app/v1/robot_part.js';
import { StatusError } from '../../core/serving/status-error.js';
import type { PartPrincipal } from '../auth/principal.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { LogRate } from './log-rate.js';
import { call, partClients, type PartClients } from './testing/part-clients.js';

const part = (partId: string, organizationId: string): PartPrincipal => ({ kind: 'part', partId, machineId: 'm', locationId: 'l', organizationId });

/** The refusal fn throws, as `CODE message`. */
function refusal(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    return `${err instanceof StatusError ? status[err.code] : 'not a StatusError'} ${(err as Error).message}`;
  }
  return 'no refusal';
}

test('a writer over its bytes per second is refused, naming the limit and when to retry, until its bucket is out of debt', (t) => {
  let now = 0;
  const rate = new LogRate({ bytesPerSecondPerWriter: 1000, bytesPerSecondPerOrg: 1_000_000 }, () => now);
  const a = part('a', 'org1');
  rate.charge(a, 1500); // a full bucket takes one request larger than a second's worth: 500 bytes in debt
  const message = refusal(() => rate.charge(a, 10));
  t.regex(message, /^RESOURCE_EXHAUSTED machine part a sent log entries faster than 1000 bytes per second, the limit \(PLATFORM_LOG_MAX_BYTES_PER_S\)/);
  t.regex(message, /nothing of this batch was stored, send it again in 500 ms/);
  rate.charge(part('b', 'org1'), 500); // another writer of the organization is not held back
  now = 499;
  t.throws(() => rate.charge(a, 10));
  now = 500;
  t.notThrows(() => rate.charge(a, 10));
});

test("an organization's writers together are held to the organization's bytes per second; other organizations are not", (t) => {
  let now = 0;
  const rate = new LogRate({ bytesPerSecondPerWriter: 1_000_000, bytesPerSecondPerOrg: 1000 }, () => now);
  rate.charge(part('a', 'org1'), 3000);
  const message = refusal(() => rate.charge(part('b', 'org1'), 10));
  t.regex(message, /^RESOURCE_EXHAUSTED organization org1 sent log entries faster than 1000 bytes per second, .*\(PLATFORM_LOG_MAX_BYTES_PER_S_PER_ORG\)/);
  t.regex(message, /send it again in 2000 ms/);
  t.notThrows(() => rate.charge(part('c', 'org2'), 3000));
  now = 2000;
  t.notThrows(() => rate.charge(part('b', 'org1'), 10));
});

let cloud: SpawnedCloud;
let machine: PartClients;
let owner: PartClients;
let partId: string;

test.before(async () => {
  // 1000 bytes a second: a batch of 50 KB puts the writer 49 s in debt, so the next call is refused
  // however slowly this machine runs the test.
  cloud = await spawnCloud(undefined, [], { PLATFORM_LOG_MAX_BYTES_PER_S: '1000' });
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'chatty']);
  const rover = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  partId = rover.part_id;
  machine = await partClients(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
  owner = await partClients(
    cloud.address,
    (await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner'])) as { id: string; key: string },
  );
});

test.after.always(async () => {
  machine?.close();
  owner?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const batch = (tag: string, n: number): LogEntry[] =>
  Array.from({ length: n }, (_, i) => ({ time: new Date(), level: 'info', loggerName: 'chatty', message: `${tag} ${i} ${'x'.repeat(500)}`, fields: {} }));

/** Sends raw bytes as a RobotService/Log request. */
function rawLog(bytes: Buffer, md: Metadata): Promise<ServiceError | null> {
  const client = new Client(cloud.address, credentials.createInsecure());
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      '/platform.app.v1.RobotService/Log',
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      md,
      (err) => {
        client.close();
        resolve(err);
      },
    ),
  );
}

test.serial('Log past the writer rate is RESOURCE_EXHAUSTED before it is decoded, and nothing of it is stored', async (t) => {
  const log = machine.robot.log.bind(machine.robot);
  await call(log, { id: partId, logs: batch('first', 100) }, machine.md);
  const err = await t.throwsAsync(call(log, { id: partId, logs: batch('second', 100) }, machine.md));
  t.is((err as ServiceError).code, status.RESOURCE_EXHAUSTED);
  t.regex(
    err!.message,
    /machine part \S+ sent log entries faster than 1000 bytes per second, the limit \(PLATFORM_LOG_MAX_BYTES_PER_S\); nothing of this batch was stored, send it again in \d+ ms/,
  );
  // Bytes that are no LogRequest at all: refused by the rate, so the cloud never spent a decode on them.
  const garbage = await rawLog(Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]), machine.md);
  t.is(garbage?.code, status.RESOURCE_EXHAUSTED);
  const page = await call(owner.app.getRobotPartLogs.bind(owner.app), { id: partId, levels: [], filter: '', pageToken: '', limit: 1000 }, owner.md);
  t.is(page.logs.length, 100);
  t.true(page.logs.every((e) => e.message.startsWith('first ')));
});
