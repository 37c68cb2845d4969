// Test helper: Debian's coturn (`turnserver`, .ci/apt-packages.txt) on 127.0.0.1, a free port, one
// long-term user, loopback peers allowed (the machine under test is on this host), its database and pid
// file in a temporary folder. It is ready when it answers: a STUN Binding on its UDP port, then a real
// TURN allocation with the user's credentials (deallocated at once). Its log lines are no signal of
// readiness: coturn prints them from several threads, in no fixed order against its listeners binding.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTurnClient } from 'werift';
import { repairWeriftTurn } from '../../../core/serving/webrtc/werift-turn.js';

export interface Coturn {
  url: string;
  username: string;
  credential: string;
  /** Everything it logged so far. */
  output(): string;
  stop(): Promise<void>;
}

/** A port free for both UDP and TCP on 127.0.0.1 (coturn listens on both). */
async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (udpFree) return port;
  }
}

/** One STUN Binding request (RFC 5389 header, no attributes); true when a Binding success comes back within `ms`. */
async function stunAnswers(port: number, ms: number): Promise<boolean> {
  const socket = createSocket('udp4');
  const id = randomBytes(12);
  const request = Buffer.concat([Buffer.from([0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42]), id]);
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      socket.on('message', (reply) => {
        if (reply.length >= 20 && reply.readUInt16BE(0) === 0x0101 && reply.subarray(8, 20).equals(id)) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      socket.on('error', () => undefined);
      socket.send(request, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}

export async function startCoturn(): Promise<Coturn> {
  repairWeriftTurn();
  const dir = mkdtempSync(join(tmpdir(), 'platform-coturn-'));
  const port = await freePort();
  // Relay ports: a range of 1000 of its own per run, so that two runs on one host rarely share it (coturn
  // skips a port in use) and a benchmark's dials do not exhaust it.
  const base = 50_000 + Math.floor(Math.random() * 14) * 1000;
  const username = 'platform';
  const credential = 'relay-secret';
  const child = spawn(
    'turnserver',
    [
      '-n',
      '-v',
      '--listening-ip=127.0.0.1',
      '--relay-ip=127.0.0.1',
      `--listening-port=${port}`,
      `--min-port=${base}`,
      `--max-port=${base + 999}`,
      '--lt-cred-mech',
      `--user=${username}:${credential}`,
      '--realm=platform.test',
      '--no-tls',
      '--no-dtls',
      '--allow-loopback-peers',
      '--no-cli',
      '--log-file=stdout',
      '--simple-log',
      `--pidfile=${join(dir, 'turnserver.pid')}`,
      `--db=${join(dir, 'turndb')}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  let exited = false;
  let spawnError: Error | undefined;
  // A program that cannot be started emits 'error' and no 'exit'.
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      spawnError = err;
      exited = true;
      resolve();
    });
  });
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    // coturn stops at once on SIGTERM; should it not, a test's teardown must still end.
    const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(hard);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    while (!(await stunAnswers(port, 200))) {
      if (spawnError) throw new Error(`turnserver: ${spawnError.message} (install coturn: .ci/apt-packages.txt)`);
      if (exited) throw new Error(`turnserver exited:\n${text}`);
      if (Date.now() > deadline) throw new Error(`turnserver did not answer STUN on 127.0.0.1:${port} within 30 s:\n${text}`);
    }
    // Credentials and relays work: one allocation, then its deallocation.
    const turn = await createTurnClient({ address: ['127.0.0.1', port], username, password: credential }, { transport: 'udp' });
    await turn.close();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `turn:127.0.0.1:${port}?transport=udp`,
    username,
    credential,
    output: () => text,
    stop,
  };
}
