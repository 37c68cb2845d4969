// The oversized-names attacker in its own process (as a real one would be): LOOPS Authenticate calls
// with a 128 KiB entity name through the web port, and as many over gRPC. Started by
// attack-oversized-names.ts with argv: <webUrl> <grpcAddress> <loops>; on the message 'stop' it
// finishes its calls, sends the count of each outcome and exits.
import { credentials, Metadata } from '@grpc/grpc-js';
import { AuthenticateRequest, AuthServiceClient } from '../../../gen/platform/rpc/v1/auth.js';
import { grpcWebCall } from '../../../core/serving/testing/web-attacks.js';

const [webUrl, address, loopsArg] = process.argv.slice(2);
const entity = 'e'.repeat(128 * 1024);
const oversized = AuthenticateRequest.encode({ entity, credentials: { type: 'api-key', payload: 'wrong' } }).finish();
const grpc = new AuthServiceClient(address, credentials.createInsecure());
let stop = false;
const outcomes: Record<string, number> = {};
const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);

async function web(): Promise<void> {
  while (!stop) {
    // A call that does not end within 30 s is counted as hung (the web port's channel was wedged).
    const reply = await Promise.race([
      grpcWebCall(webUrl, '/platform.rpc.v1.AuthService/Authenticate', oversized).catch(() => 'error' as const),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000)),
    ]);
    count(`web ${typeof reply === 'string' ? reply : reply.code}`);
  }
}

async function direct(): Promise<void> {
  while (!stop) {
    await new Promise<void>((resolve) =>
      grpc.authenticate({ entity, credentials: { type: 'api-key', payload: 'wrong' } }, new Metadata(), { deadline: Date.now() + 30_000 }, (err) => {
        count(`grpc ${err?.code ?? 0}`);
        resolve();
      }),
    );
  }
}

const loops = Array.from({ length: Number(loopsArg) }, () => [web(), direct()]).flat();
process.send!('started');
process.on('message', async (message) => {
  if (message !== 'stop') return;
  stop = true;
  await Promise.all(loops);
  grpc.close();
  process.send!(outcomes, () => process.exit(0));
});
