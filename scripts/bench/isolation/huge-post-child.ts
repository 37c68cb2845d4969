// The huge-posts attacker in its own process (as a real one would be, on its own machine): the bench's
// own event loop then measures the quiet organization without also pumping the attacker's bytes.
// Started by attack-huge-posts.ts with argv: <webUrl> <loops>; on the message 'stop' it finishes its
// requests, sends its summary and exits.
import { hostilePost } from '../../../core/serving/testing/web-attacks.js';

const MiB = 1024 * 1024;
const [webUrl, loopsArg] = process.argv.slice(2);
let stop = false;
let sentBytes = 0;
const outcomes: Record<string, number> = {};
const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);

async function loop(): Promise<void> {
  while (!stop) {
    try {
      const reply = await hostilePost(webUrl, '/platform.rpc.v1.AuthService/Authenticate', { announce: 1024 * MiB, sendBytes: 256 * MiB });
      sentBytes += reply.sent;
      count(`grpc ${reply.code}`);
    } catch (err) {
      count((err as { code?: string }).code ?? 'error');
    }
  }
}

const loops = Array.from({ length: Number(loopsArg) }, loop);
process.send!('started');
process.on('message', async (message) => {
  if (message !== 'stop') return;
  stop = true;
  await Promise.all(loops);
  process.send!({ outcomes, sentBytes }, () => process.exit(0));
});
