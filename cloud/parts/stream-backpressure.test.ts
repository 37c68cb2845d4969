// Hostile-tenant suite, issue 27 finding 7: TailRobotPartLogs and WatchConfig respect back-pressure.
// A tail that does not read gets at most PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES of entries queued for it
// and is then closed with RESOURCE_EXHAUSTED naming the limit (40 such tails took the cloud to 6.1 GB);
// a watcher that does not read gets the newest revision once it reads again, not one message per save.
// Against the real platform-cloud, the slow clients on raw HTTP/2 streams (the test decides when they
// read); and BoundedSender on its own.
import test from 'ava';
import { status, type Metadata } from '@grpc/grpc-js';
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConfigResponse,
  TailRobotPartLogsRequest,
  TailRobotPartLogsResponse,
  WatchConfigRequest,
  type LogEntry,
} from '../../gen/platform/app/v1/robot_part.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';
import { BoundedSender } from './stream-sender.js';
import { call, partClients, type PartClients } from './testing/part-clients.js';

const LIMIT = 256 * 1024;

let cloud: SpawnedCloud;
let rover: { part_id: string; part_secret: string };
let owner: PartClients;
let machine: PartClients;
/** The connection of the clients that stop reading (a paused stream holds its connection's window). */
let slow: ClientHttp2Session;

test.before(async () => {
  cloud = await spawnCloud(undefined, [], { PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES: String(LIMIT) });
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'slow readers']);
  rover = await adminJson(cloud.dataDir, ['machine', 'create', '--org', org.id, '--name', 'rover']);
  const ownerKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  owner = await partClients(cloud.address, ownerKey as { id: string; key: string });
  machine = await partClients(cloud.address, { partId: rover.part_id, secret: rover.part_secret });
  slow = connect(`http://${cloud.address}`);
});

test.after.always(async () => {
  slow?.close();
  owner?.close();
  machine?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

const logBatch = (n: number, from: number): LogEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    time: new Date(),
    level: 'info',
    loggerName: 'flood',
    message: `entry ${from + i} ${'x'.repeat(400)}`,
    fields: {},
  }));

/**
 * A server-streaming call on a raw HTTP/2 stream: a paused Node HTTP/2 stream sends no flow-control
 * updates, exactly as a client that never reads.
 */
class RawCall<T> {
  private readonly stream: ClientHttp2Stream;
  private buffered = Buffer.alloc(0);
  readonly messages: T[] = [];
  private readonly ended: Promise<{ code: number; details: string }>;
  private listeners: (() => void)[] = [];

  constructor(path: string, md: Metadata, request: Uint8Array, decode: (bytes: Uint8Array) => T) {
    this.stream = slow.request({
      ':method': 'POST',
      ':path': path,
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: String(md.get('authorization')[0]),
    });
    const frame = Buffer.alloc(5 + request.byteLength);
    frame.writeUInt32BE(request.byteLength, 1);
    frame.set(request, 5);
    this.stream.end(frame);
    this.stream.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 5 && this.buffered.length >= 5 + this.buffered.readUInt32BE(1)) {
        const length = this.buffered.readUInt32BE(1);
        this.messages.push(decode(this.buffered.subarray(5, 5 + length)));
        this.buffered = this.buffered.subarray(5 + length);
      }
      for (const listener of [...this.listeners]) listener();
    });
    this.ended = new Promise((resolve) => {
      let trailers: Record<string, unknown> = {};
      this.stream.on('response', (headers) => (trailers = { ...headers, ...trailers }));
      this.stream.on('trailers', (t) => (trailers = { ...trailers, ...t }));
      this.stream.on('close', () =>
        resolve({ code: Number(trailers['grpc-status'] ?? -1), details: decodeURIComponent(String(trailers['grpc-message'] ?? '')) }),
      );
    });
  }

  /** Resolves once `until` holds for the messages read so far. */
  until(until: (messages: T[]) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!until(this.messages)) return;
        this.listeners = this.listeners.filter((l) => l !== check);
        resolve();
      };
      this.listeners.push(check);
      check();
    });
  }

  pause(): void {
    this.stream.pause();
  }

  /** Reads again until the call ends (its status) or `enough` holds (undefined). */
  read(enough: (messages: T[]) => boolean): Promise<{ code: number; details: string } | undefined> {
    this.stream.resume();
    return Promise.race([this.ended, this.until(enough).then(() => undefined)]);
  }

  cancel(): void {
    this.stream.close();
  }
}

const entries = (messages: TailRobotPartLogsResponse[]) => messages.flatMap((m) => m.logs);

/** Opens a tail, waits for its first message (so the cloud has it), then stops reading. */
async function pausedTail(): Promise<RawCall<TailRobotPartLogsResponse>> {
  const tail = new RawCall(
    '/platform.app.v1.AppService/TailRobotPartLogs',
    owner.md,
    TailRobotPartLogsRequest.encode({ id: rover.part_id, levels: [] }).finish(),
    (b) => TailRobotPartLogsResponse.decode(b),
  );
  const first = tail.until((m) => m.length > 0);
  for (let i = 0; !(await Promise.race([first.then(() => true), sleep(200).then(() => false)])); i++) {
    await call(machine.robot.log.bind(machine.robot), { id: rover.part_id, logs: logBatch(1, -1 - i) }, machine.md);
  }
  tail.pause();
  return tail;
}

test.serial('tails that do not read are closed with RESOURCE_EXHAUSTED naming the limit, having been sent a bounded amount', async (t) => {
  const tails = [await pausedTail(), await pausedTail(), await pausedTail()];
  // 20 batches of 200 entries of about 430 bytes: 1.7 MB of log text, 7 times the limit, to each tail.
  const total = 20 * 200;
  for (let b = 0; b < 20; b++) await call(machine.robot.log.bind(machine.robot), { id: rover.part_id, logs: logBatch(200, b * 200) }, machine.md);
  for (const tail of tails) {
    const before = entries(tail.messages).length;
    const end = await tail.read((m) => entries(m).length >= before + total);
    const received = entries(tail.messages).length - before;
    t.is(end?.code, status.RESOURCE_EXHAUSTED, `received ${received} of ${total} entries, then ${end?.code}: ${end?.details}`);
    t.regex(end!.details, new RegExp(`more than the ${LIMIT}-byte limit \\(PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES\\); the stream is closed`));
    // What reached the client: the queue's limit (counted as UTF-16, so about half of it in text), grpc-js'
    // 16 buffered messages of 16 KiB and the HTTP/2 window; on the old code every entry, 1.7 MB, and no end.
    const bytes = entries(tail.messages).reduce((n, e) => n + e.message.length, 0);
    t.true(bytes < LIMIT + 512 * 1024, `received ${received} entries, ${bytes} bytes of text`);
    t.log(`a paused tail received ${received} of ${total} entries (${bytes} bytes of text) before it was closed`);
  }
  // The cloud still tails for a client that reads.
  const reader = await pausedTail();
  const got = reader.read((m) => entries(m).some((e) => e.message === 'after'));
  await call(machine.robot.log.bind(machine.robot), { id: rover.part_id, logs: [{ ...logBatch(1, 0)[0], message: 'after' }] }, machine.md);
  t.is(await got, undefined);
  reader.cancel();
});

test.serial('a tail that falls behind by less than the limit gets every entry, in order, once it reads', async (t) => {
  const tail = await pausedTail();
  const count = 300; // about 130 KB
  for (let b = 0; b < 3; b++) await call(machine.robot.log.bind(machine.robot), { id: rover.part_id, logs: logBatch(100, 1000 + b * 100) }, machine.md);
  const end = await tail.read((m) => entries(m).some((e) => e.message.startsWith(`entry ${1000 + count - 1} `)));
  t.is(end, undefined);
  const numbers = entries(tail.messages)
    .map((e) => Number(e.message.split(' ')[1]))
    .filter((n) => n >= 1000);
  t.deepEqual(
    numbers,
    Array.from({ length: count }, (_, i) => 1000 + i),
  );
  tail.cancel();
});

test.serial('a WatchConfig that does not read is sent the newest revision when it reads again, not one message per save', async (t) => {
  const config = (n: number) => ({
    components: Array.from({ length: 200 }, (_, i) => ({ name: `sensor-${n}-${i}-${'s'.repeat(60)}`, api: 'core:component:sensor', model: 'fake' })),
  });
  const watch = new RawCall(
    '/platform.app.v1.RobotService/WatchConfig',
    machine.md,
    WatchConfigRequest.encode({ id: rover.part_id, knownRevision: 0 }).finish(),
    (b) => ConfigResponse.decode(b),
  );
  watch.pause();
  const saves = 60;
  let newest = 0;
  for (let i = 0; i < saves; i++) {
    const res = await call(owner.app.updateRobotPart.bind(owner.app), { id: rover.part_id, robotConfig: config(i) }, owner.md);
    newest = res.part!.configRevision;
  }
  const end = await watch.read((got) => got.some((c) => c.revision === newest));
  t.is(end, undefined);
  const revisions = watch.messages.map((c) => c.revision);
  t.is(revisions.at(-1), newest, 'the newest revision arrives');
  t.true(revisions.length < saves, `${revisions.length} messages for ${saves} saves: ${revisions.join(' ')}`);
  t.deepEqual(
    revisions,
    [...revisions].sort((a, b) => a - b),
    'in order',
  );
  t.is(new Set(revisions).size, revisions.length, 'none twice');
  t.log(`${revisions.length} messages for ${saves} saves`);
  watch.cancel();
});

/** A stream whose client reads only when told: write() returns false after `highWaterMark` messages. */
function heldStream(highWaterMark: number) {
  const delivered: string[][] = [];
  const pending: (() => void)[] = [];
  const stream = new Writable({
    objectMode: true,
    highWaterMark,
    write(message: { items: string[] }, _enc, done) {
      delivered.push(message.items);
      pending.push(done);
    },
  });
  return { stream, delivered, release: () => pending.splice(0).forEach((done) => done()) };
}

test('BoundedSender: waits for drain when write() returns false, sends everything in order within the limit', async (t) => {
  const { stream, delivered, release } = heldStream(2);
  let overflowed: Error | undefined;
  const sender = new BoundedSender<string, { items: string[] }>(
    stream,
    (items) => ({ items }),
    (s) => s.length,
    200_000,
    (e) => (overflowed = e),
    'test',
  );
  // 10,000 characters each: one item per message of at most 16 KiB.
  const item = (i: number) => `${i}`.padEnd(10_000, '.');
  sender.push([0, 1, 2, 3, 4, 5, 6, 7].map(item));
  t.is(delivered.length, 1, 'the stream took one; one more is buffered, then write() returned false');
  t.is(sender.waitingBytes, 6 * 10_000);
  for (let i = 0; i < 20 && delivered.length < 8; i++) {
    release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is(overflowed, undefined);
  t.deepEqual(delivered.flat(), [0, 1, 2, 3, 4, 5, 6, 7].map(item));
  t.is(sender.waitingBytes, 0);
});

test('BoundedSender: past the limit it stops, drops what waits and reports once', (t) => {
  const { stream, delivered } = heldStream(1);
  const errors: Error[] = [];
  const sender = new BoundedSender<string, { items: string[] }>(
    stream,
    (items) => ({ items }),
    (s) => s.length,
    1000,
    (e) => errors.push(e),
    'TailRobotPartLogs of part p',
  );
  for (let i = 0; i < 20; i++) sender.push(['y'.repeat(200)]);
  t.is(errors.length, 1);
  t.regex(
    errors[0].message,
    /TailRobotPartLogs of part p: the client reads too slowly: \d+ bytes of entries waited to be sent, more than the 1000-byte limit \(PLATFORM_LOG_TAIL_MAX_QUEUED_BYTES\)/,
  );
  t.is(sender.waitingBytes, 0);
  t.true(delivered.length <= 2);
});
