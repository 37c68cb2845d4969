// AuthService paces its refusals per caller address (issue 27, item 3; core/serving/refusal-pacer.ts):
// past the allowance a refused login waits for its answer, while other addresses' refusals and every
// successful login are answered at once; a caller that gives up gives its place back. In process, with
// a pacer whose wait outlasts the test, so a held answer is seen as held without timing anything.
import test from 'ava';
import { credentials, Metadata, Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { AuthServiceClient, type AuthenticateRequest } from '../../gen/platform/rpc/v1/auth.js';
import { RefusalPacer } from '../../core/serving/refusal-pacer.js';
import { eventually } from '../../core/serving/testing/eventually.js';
import { markForwarded } from '../../core/serving/web/forwarded-for.js';
import { createKey, createOrganization } from '../admin/tenancy.js';
import { Store } from '../store/store.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import { addAuthService } from './auth-service.js';
import { LoginBackoff } from './login-backoff.js';
import { TokenSigner } from './token.js';

test('refused logins past the allowance are held; other addresses and successful logins are answered; a cancelled call gives its place back', async (t) => {
  const dir = tempDataDir();
  const store = await Store.open(dir);
  const pacer = new RefusalPacer({ freePerWindow: 2, stepMs: 600_000, maxDelayMs: 600_000 });
  const server = new Server();
  addAuthService(server, store, TokenSigner.forDataDir(dir), new LoginBackoff(), pacer);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new AuthServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  t.teardown(async () => {
    client.close();
    server.forceShutdown();
    await store.close();
    removeDataDir(dir);
  });
  const org = await createOrganization(store, { name: 'paced' });
  const key = await createKey(store, { org: org.id, role: 'owner' });
  const oversized: AuthenticateRequest = { entity: 'e'.repeat(128 * 1024), credentials: { type: 'api-key', payload: 'wrong' } };
  const call = (request: AuthenticateRequest, metadata = new Metadata()) =>
    new Promise<number>((resolve) => client.authenticate(request, metadata, (err) => resolve(err ? (err as ServiceError).code : status.OK)));

  t.is(await call(oversized), status.INVALID_ARGUMENT);
  t.is(await call({ entity: key.id, credentials: { type: 'api-key', payload: 'wrong' } }), status.UNAUTHENTICATED);
  // The third refusal of 127.0.0.1 is held.
  let heldCode: number | undefined;
  const held = client.authenticate(oversized, new Metadata(), (err) => (heldCode = (err as ServiceError | null)?.code));
  await eventually(
    () => pacer.heldFor('127.0.0.1'),
    (n) => n === 1,
    { what: 'the third refusal of 127.0.0.1 to be held' },
  );
  // A browser behind the web port (its address forwarded) is refused at once.
  const other = new Metadata();
  markForwarded(other, '10.1.2.3');
  t.is(await call(oversized, other), status.INVALID_ARGUMENT);
  // A successful login of the paced address is not held: only refusals count.
  t.is(await call({ entity: key.id, credentials: { type: 'api-key', payload: key.key } }), status.OK);
  t.is(heldCode, undefined, 'the held refusal is still waiting');
  held.cancel();
  await eventually(
    () => pacer.heldFor('127.0.0.1'),
    (n) => n === 0,
    { what: 'the cancelled call to give its place back' },
  );
  t.is(heldCode, status.CANCELLED);
});
