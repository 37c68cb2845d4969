// Issue 27 #2: the attacker, without any login and from a process of its own (huge-post-child.ts),
// keeps LOOPS huge gRPC-Web POSTs going to the data browser's web port at once, each announcing a
// 1 GiB frame and streaming zeros (made while sent, up to 256 MiB per request) until the port answers;
// each is restarted as soon as it ends.
import { AuthenticateRequest } from '../../../gen/platform/rpc/v1/auth.js';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { grpcWebCall } from '../../../core/serving/testing/web-attacks.js';
import type { Attack } from './harness.js';

const LOOPS = Number(process.env.BENCH_HUGE_POSTS ?? 4);
const MiB = 1024 * 1024;

export const hugePosts: Attack = {
  name: 'huge-posts',
  finding: 'issue 27 #2',
  describe: `${LOOPS} concurrent gRPC-Web POSTs without login (from a process of their own), each announcing a 1 GiB frame and streaming up to 256 MiB`,
  async start({ webUrl, attacker }) {
    const child = fork(fileURLToPath(new URL('./huge-post-child.js', import.meta.url)), [webUrl, String(LOOPS)], { stdio: 'inherit' });
    await once(child, 'message');
    return async () => {
      child.send('stop');
      const [result] = (await once(child, 'message')) as [{ outcomes: Record<string, number>; sentBytes: number }];
      // The page still signs in after the attack.
      const signIn = await grpcWebCall(
        webUrl,
        '/platform.rpc.v1.AuthService/Authenticate',
        AuthenticateRequest.encode({ entity: attacker.keyId, credentials: { type: 'api-key', payload: attacker.key } }).finish(),
      );
      return `outcomes ${JSON.stringify(result.outcomes)}, ${Math.round(result.sentBytes / MiB)} MiB taken by the sockets (kernel buffers; the port reads none of it past the frame head) before the refusals; a sign-in through the web port afterwards: gRPC ${signIn.code}`;
    };
  },
};
