// werift 0.24.4's TURN client, as repaired by core/serving/webrtc/werift-turn.ts, against coturn: a
// process whose peers used a relay (or failed to get one) exits on its own once they are closed, and the
// relays are given back to the server. Without the repairs the first process lives on for over 8 minutes
// (the allocation's refresh timer) and the second for ever (the failed allocation's UDP socket).
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startCoturn, type Coturn } from './testing/coturn.js';

const program = fileURLToPath(new URL('./testing/relay-peers.ts', import.meta.url));
let turn: Coturn | undefined;

test.before(async (t) => {
  t.timeout(60_000);
  turn = await startCoturn();
});

test.after.always(async () => {
  await turn?.stop();
});

/** Runs relay-peers.ts; resolves with its output if it exits on its own within `ms`, else kills it and rejects. */
function run(args: string[], ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', program, ...args], { timeout: ms, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.killed ? `still running after ${ms} ms` : err.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

const server = () => ({ urls: [turn!.url], username: turn!.username, credential: turn!.credential });

test.serial('peers that connected through a relay and closed let their process exit, and deallocate their relays', async (t) => {
  t.timeout(90_000);
  const before = (turn!.output().match(/lifetime=0/g) ?? []).length;
  // 60 s: the process starts through tsx on a loaded machine in well under that; unrepaired, it lives 500 s.
  const output = await run([JSON.stringify(server())], 60_000);
  t.regex(output, /route \{"local":\{"type":"relay"/);
  t.regex(output, /closed/);
  // Both peers allocated a relay (the machine gathers one too) and gave it back with a zero lifetime.
  await new Promise((r) => setTimeout(r, 200));
  t.true((turn!.output().match(/lifetime=0/g) ?? []).length - before >= 2, turn!.output().slice(-2000));
});

test.serial('a relay-only caller whose allocation fails is refused, naming the TURN server, and its process exits', async (t) => {
  t.timeout(90_000);
  const output = await run([JSON.stringify({ ...server(), credential: 'wrong' }), 'refused'], 60_000);
  t.regex(output, /^refused: relayOnly: the TURN server \(turn:127\.0\.0\.1:\d+\?transport=udp\) gave no relay/m);
});
