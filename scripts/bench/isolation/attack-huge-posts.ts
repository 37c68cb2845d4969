// Issue 27 #2: the attacker, without any login, keeps LOOPS huge gRPC-Web POSTs going to the data
// browser's web port at once, each announcing a 1 GiB frame and streaming zeros (made while sent, up to
// 256 MiB per request) until the port answers; each is restarted as soon as it ends.
import { AuthenticateRequest } from '../../../gen/platform/rpc/v1/auth.js';
import { grpcWebCall, hostilePost } from '../../../core/shared/testing/web-attacks.js';
import type { Attack } from './harness.js';

const LOOPS = Number(process.env.BENCH_HUGE_POSTS ?? 4);
const MiB = 1024 * 1024;

export const hugePosts: Attack = {
  name: 'huge-posts',
  finding: 'issue 27 #2',
  describe: `${LOOPS} concurrent gRPC-Web POSTs without login, each announcing a 1 GiB frame and streaming up to 256 MiB`,
  async start({ webUrl, attacker }) {
    let stop = false;
    let sentBytes = 0;
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    const loop = async () => {
      while (!stop) {
        try {
          const reply = await hostilePost(webUrl, '/platform.rpc.v1.AuthService/Authenticate', { announce: 1024 * MiB, sendBytes: 256 * MiB });
          sentBytes += reply.sent;
          count(`grpc ${reply.code}`);
        } catch (err) {
          count((err as { code?: string }).code ?? 'error');
        }
      }
    };
    const loops = Array.from({ length: LOOPS }, loop);
    return async () => {
      stop = true;
      await Promise.all(loops);
      // The page still signs in after the attack.
      const signIn = await grpcWebCall(
        webUrl,
        '/platform.rpc.v1.AuthService/Authenticate',
        AuthenticateRequest.encode({ entity: attacker.keyId, credentials: { type: 'api-key', payload: attacker.key } }).finish(),
      );
      return `outcomes ${JSON.stringify(Object.fromEntries(outcomes))}, ${Math.round(sentBytes / MiB)} MiB taken by the sockets (kernel buffers; the port reads none of it past the frame head) before the refusals; a sign-in through the web port afterwards: gRPC ${signIn.code}`;
    };
  },
};
