import test from 'ava';
import { hashSecret, newSecret, verifySecret } from './secret-hash.js';
import { TokenSigner } from './token.js';

const signer = new TokenSigner(Buffer.alloc(32, 7), 60);

test('a signed token verifies and names its subject', (t) => {
  const claims = signer.verify(signer.sign('key-1', 'api-key'));
  t.is(claims.sub, 'key-1');
  t.is(claims.kind, 'api-key');
});

test('an expired token is refused', (t) => {
  const token = signer.sign('key-1', 'api-key', Date.now() - 61_000);
  t.throws(() => signer.verify(token), { message: /expired/ });
});

test('a token signed with another secret or tampered with is refused', (t) => {
  const other = new TokenSigner(Buffer.alloc(32, 8), 60).sign('key-1', 'api-key');
  t.throws(() => signer.verify(other), { message: /signature/ });
  const [h, , s] = signer.sign('key-1', 'api-key').split('.');
  const forged = Buffer.from(JSON.stringify({ sub: 'key-2', kind: 'api-key', iat: 0, exp: 9e9 })).toString('base64url');
  t.throws(() => signer.verify(`${h}.${forged}.${s}`), { message: /signature/ });
  t.throws(() => signer.verify('garbage'), { message: /malformed/ });
});

test('secrets are stored as salted scrypt hashes that verify only the right secret', async (t) => {
  const secret = newSecret();
  const hash = await hashSecret(secret);
  t.false(hash.includes(secret));
  t.not(hash, await hashSecret(secret));
  t.true(await verifySecret(secret, hash));
  t.false(await verifySecret(`${secret}x`, hash));
});
