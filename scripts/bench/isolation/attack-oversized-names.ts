// Issue 27 #3: the attacker, without any login, keeps LOOPS Authenticate calls with a 128 KiB entity name
// (echoed in the error) going through the data browser's web port, and as many over gRPC, under the
// cloud's default login back-off (which soon refuses the attacker's address before any lookup); another
// visitor of the page (from 127.0.0.2) signs in through the same port meanwhile, once every 200 ms, and
// its slowest sign-in and its failures are reported (they once all hung, for every visitor, until a
// restart).
import { credentials, Metadata } from '@grpc/grpc-js';
import { AuthenticateRequest, AuthServiceClient } from '../../../gen/platform/rpc/v1/auth.js';
import { grpcWebCall } from '../../../core/shared/testing/web-attacks.js';
import type { Attack } from './harness.js';

const LOOPS = Number(process.env.BENCH_OVERSIZED_NAMES ?? 4);
const AUTHENTICATE = '/platform.rpc.v1.AuthService/Authenticate';

export const oversizedNames: Attack = {
  name: 'oversized-names',
  finding: 'issue 27 #3',
  describe: `${LOOPS} + ${LOOPS} concurrent Authenticate calls with a 128 KiB entity name (web port, gRPC), a page visitor signing in meanwhile`,
  async start({ webUrl, address, quiet }) {
    let stop = false;
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    const entity = 'e'.repeat(128 * 1024);
    const oversized = AuthenticateRequest.encode({ entity, credentials: { type: 'api-key', payload: 'wrong' } }).finish();
    const grpc = new AuthServiceClient(address, credentials.createInsecure());
    const web = async () => {
      while (!stop) {
        const reply = await grpcWebCall(webUrl, AUTHENTICATE, oversized).catch(() => undefined);
        count(`web ${reply?.code ?? 'error'}`);
      }
    };
    const direct = async () => {
      while (!stop) {
        await new Promise<void>((resolve) =>
          grpc.authenticate({ entity, credentials: { type: 'api-key', payload: 'wrong' } }, new Metadata(), { deadline: Date.now() + 30_000 }, (err) => {
            count(`grpc ${err?.code ?? 0}`);
            resolve();
          }),
        );
      }
    };
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
    const loops = [...Array.from({ length: LOOPS }, web), ...Array.from({ length: LOOPS }, direct), signIns()];
    return async () => {
      stop = true;
      await Promise.all(loops);
      grpc.close();
      return `outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; page visitor sign-ins meanwhile: ${visitor.ok} ok, ${visitor.failed} failed, slowest ${visitor.slowestMs} ms`;
    };
  },
};
