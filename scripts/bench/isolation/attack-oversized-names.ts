// Issue 27 #3: the attacker, without any login and from a process of its own (oversized-names-child.ts),
// keeps LOOPS Authenticate calls with a 128 KiB entity name (echoed in the error) going through the data
// browser's web port, and as many over gRPC, under the cloud's default login back-off (which soon
// refuses the attacker's address before any lookup). Another visitor of the page (from 127.0.0.2)
// signs in through the same port meanwhile, once every 200 ms; its slowest sign-in and its failures are
// reported (they once all hung, for every visitor, until a restart).
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { AuthenticateRequest } from '../../../gen/platform/rpc/v1/auth.js';
import { grpcWebCall } from '../../../core/serving/testing/web-attacks.js';
import type { Attack } from './harness.js';

const LOOPS = Number(process.env.BENCH_OVERSIZED_NAMES ?? 4);
const AUTHENTICATE = '/platform.rpc.v1.AuthService/Authenticate';

export const oversizedNames: Attack = {
  name: 'oversized-names',
  finding: 'issue 27 #3',
  describe: `${LOOPS} + ${LOOPS} concurrent Authenticate calls with a 128 KiB entity name (web port, gRPC; from a process of their own), a page visitor signing in meanwhile`,
  async start({ webUrl, address, quiet }) {
    const child = fork(fileURLToPath(new URL('./oversized-names-child.js', import.meta.url)), [webUrl, address, String(LOOPS)], { stdio: 'inherit' });
    await once(child, 'message');
    let stop = false;
    const visitor = { ok: 0, failed: 0, slowestMs: 0 };
    const signIns = async () => {
      const request = AuthenticateRequest.encode({ entity: quiet.keyId, credentials: { type: 'api-key', payload: quiet.key } }).finish();
      while (!stop) {
        const started = Date.now();
        // From another loopback address: another browser, outside the attacker's login back-off.
        const reply = await Promise.race([
          grpcWebCall(webUrl, AUTHENTICATE, request, {}, '127.0.0.2').catch(() => undefined),
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 30_000)),
        ]);
        visitor.slowestMs = Math.max(visitor.slowestMs, Date.now() - started);
        if (reply?.code === 0) visitor.ok++;
        else visitor.failed++;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const visiting = signIns();
    return async () => {
      stop = true;
      child.send('stop');
      const [outcomes] = (await once(child, 'message')) as [Record<string, number>];
      await visiting;
      return `outcomes ${JSON.stringify(outcomes)}; page visitor sign-ins meanwhile: ${visitor.ok} ok, ${visitor.failed} failed, slowest ${visitor.slowestMs} ms`;
    };
  },
};
