// Issue 27, finding 11 (the PostgreSQL parts): raw frontend messages after a real login. A Bind that
// declares 65,535 parameters is answered with a correct count, not "-1"; FunctionCall, CopyData/CopyDone/
// CopyFail and unknown message types each get an ErrorResponse (and ReadyForQuery where the protocol ends a
// cycle), never silence; the session goes on where the protocol allows it.
import test from 'ava';
import type { Socket } from 'node:net';
import pg from 'pg';
import { PASSWORD_A, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

let te: TestEndpoint;
test.before(async () => {
  te = await startTestEndpoint();
});
test.after.always(async () => {
  await te?.close();
});

/** One frontend message: type byte, int32 length (itself included), body. */
function frame(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.from(`${s}\0`);
const i16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n & 0xffff);
  return b;
};
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

interface BackendMessage {
  type: string;
  body: Buffer;
}

/** A logged-in connection (node-postgres did the SCRAM exchange) on whose socket raw messages are written and read. */
async function rawSession() {
  const client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  client.on('error', () => undefined);
  await client.connect();
  const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
  // node-postgres' own parser would choke on replies to messages it did not send: it stops listening.
  socket.removeAllListeners('data');
  let buffered = Buffer.alloc(0);
  const messages: BackendMessage[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  socket.on('data', (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    while (buffered.length >= 5 && buffered.length >= 1 + buffered.readInt32BE(1)) {
      const len = buffered.readInt32BE(1);
      messages.push({ type: String.fromCharCode(buffered[0]), body: buffered.subarray(5, 1 + len) });
      buffered = buffered.subarray(1 + len);
    }
    wake?.();
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
  });
  /** Waits for the next backend message of one of `types` and returns every message up to and including it. */
  const until = async (...types: string[]): Promise<BackendMessage[]> => {
    for (;;) {
      const at = messages.findIndex((m) => types.includes(m.type));
      if (at >= 0) return messages.splice(0, at + 1);
      if (closed) throw new Error(`connection closed while waiting for ${types.join('/')}; got ${messages.map((m) => m.type).join('')}`);
      await new Promise<void>((r) => (wake = r));
    }
  };
  return {
    send: (...frames: Buffer[]) => socket.write(Buffer.concat(frames)),
    until,
    closedPromise: new Promise<void>((r) => (closed ? r() : socket.once('close', () => r()))),
    end: () => client.end().catch(() => undefined),
  };
}

/** The fields of an ErrorResponse: S severity, C SQLSTATE, M message. */
function errorFields(m: BackendMessage): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < m.body.length && m.body[i] !== 0) {
    const code = String.fromCharCode(m.body[i]);
    const end = m.body.indexOf(0, i + 1);
    out[code] = m.body.toString('utf8', i + 1, end);
    i = end + 1;
  }
  return out;
}

async function selectOne(s: Awaited<ReturnType<typeof rawSession>>): Promise<string> {
  s.send(frame('Q', cstr('SELECT 41 + 1 AS n')));
  const got = await s.until('Z');
  const row = got.find((m) => m.type === 'D');
  t0(row, 'a DataRow');
  return row!.body.toString('utf8', 6, 6 + row!.body.readInt32BE(2));
}
function t0(v: unknown, what: string): asserts v {
  if (!v) throw new Error(`expected ${what}`);
}

test('a Bind declaring 65,535 parameters is refused with the real count (08P01), and the session goes on after Sync', async (t) => {
  const s = await rawSession();
  try {
    s.send(frame('P', cstr(''), cstr('SELECT $1::INTEGER AS n'), i16(0)));
    // 65,535 text parameters, each NULL (length -1): a complete, well-formed message of 262 KB.
    const params = Buffer.alloc(65_535 * 4, 0xff);
    s.send(frame('B', cstr(''), cstr(''), i16(0), i16(65_535), params, i16(0)), frame('E', cstr(''), i32(0)), frame('S'));
    const got = await s.until('Z');
    const err = got.find((m) => m.type === 'E');
    t0(err, 'an ErrorResponse');
    const f = errorFields(err);
    t.is(f.C, '08P01');
    t.is(f.M, 'bind message supplies 65535 parameters, but prepared statement "" requires 1');
    t.false(
      got.some((m) => m.type === 'D'),
      'nothing ran',
    );
    // A Bind that declares 65,535 parameters but ends early is a protocol violation, not a crash.
    s.send(frame('P', cstr(''), cstr('SELECT 1'), i16(0)), frame('B', cstr(''), cstr(''), i16(0), i16(65_535), i32(-1)), frame('S'));
    const short = errorFields((await s.until('Z')).find((m) => m.type === 'E')!);
    t.is(short.C, '08P01');
    t.regex(short.M, /bind message supplies 65535 parameters|ends before its last field/);
    // Parameter formats that match neither one-for-all nor one-each.
    s.send(
      frame('P', cstr(''), cstr('SELECT $1::TEXT AS a, $2::TEXT AS b'), i16(0)),
      frame('B', cstr(''), cstr(''), i16(3), i16(0), i16(0), i16(0), i16(2), i32(-1), i32(-1), i16(0)),
      frame('S'),
    );
    t.is(errorFields((await s.until('Z')).find((m) => m.type === 'E')!).M, 'bind message has 3 parameter formats but 2 parameters');
    t.is(await selectOne(s), '42');
  } finally {
    await s.end();
  }
});

test('FunctionCall gets 0A000 and ReadyForQuery; the session goes on', async (t) => {
  const s = await rawSession();
  try {
    // FunctionCall: function oid, no argument formats, no arguments, text result.
    s.send(frame('F', i32(1598), i16(0), i16(0), i16(0)));
    const got = await s.until('Z');
    t.deepEqual(
      got.map((m) => m.type),
      ['E', 'Z'],
    );
    const f = errorFields(got[0]);
    t.is(f.C, '0A000');
    t.regex(f.M, /function calls \(the FunctionCall message\) are not supported/);
    t.is(got[1].body.toString('latin1'), 'I');
    t.is(await selectOne(s), '42');
  } finally {
    await s.end();
  }
});

test('CopyData, CopyDone and CopyFail outside a COPY get 08P01 at once; Sync then answers ReadyForQuery', async (t) => {
  const s = await rawSession();
  try {
    for (const [type, name, body] of [
      ['d', 'CopyData', Buffer.from('1\t2\n')],
      ['c', 'CopyDone', Buffer.alloc(0)],
      ['f', 'CopyFail', cstr('client gave up')],
    ] as const) {
      s.send(frame(type, body));
      const err = (await s.until('E'))[0];
      const f = errorFields(err);
      t.is(f.C, '08P01', name);
      t.is(f.M, `${name} message received while no COPY is in progress (COPY is not supported)`);
      s.send(frame('S'));
      t.deepEqual(
        (await s.until('Z')).map((m) => m.type),
        ['Z'],
      );
    }
    t.is(await selectOne(s), '42');
  } finally {
    await s.end();
  }
});

test('an unknown message type gets a FATAL 08P01 naming it, and the connection is closed', async (t) => {
  const s = await rawSession();
  s.send(frame('y', Buffer.from('whatever')));
  const got = await s.until('E');
  const f = errorFields(got[got.length - 1]);
  t.is(f.S, 'FATAL');
  t.is(f.C, '08P01');
  t.is(f.M, 'invalid frontend message type 121 ("y")');
  await s.closedPromise;
  t.pass('the server closed the connection');
  // The endpoint itself is fine.
  const other = await rawSession();
  try {
    t.is(await selectOne(other), '42');
  } finally {
    await other.end();
  }
});
