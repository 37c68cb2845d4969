// The micro-server's stand-ins for werift's certificate, key and curve packages (scripts/build-micro.mjs
// swaps them in) against the packages themselves, resolved from werift's own folder as werift resolves
// them: the same certificates' content, the same keys, the same shared secrets.
import test from 'ava';
import { createPublicKey, createVerify, generateKeyPairSync, randomBytes, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { cryptoProvider, PemConverter, X509CertificateGenerator } from './self-signed.js';
import { Certificate, PrivateKey } from './pem-keys.js';
import nacl, { p256 } from './key-exchange.js';

const fromWerift = createRequire(createRequire(import.meta.url).resolve('werift'));
/* eslint-disable @typescript-eslint/no-explicit-any -- the replaced packages, loaded untyped */
const peculiar = fromWerift('@peculiar/x509') as any;
const fidm = fromWerift('@fidm/x509') as any;
const tweetnacl = fromWerift('tweetnacl') as any;
const noble = fromWerift('@noble/curves/p256').p256 as any;
/* eslint-enable @typescript-eslint/no-explicit-any */
peculiar.cryptoProvider.set(webcrypto);
cryptoProvider.set(webcrypto);

const NAME = 'C=AU, ST=Some-State, O=Internet Widgits Pty Ltd';
const ECDSA = { name: 'ECDSA', hash: 'SHA-256', namedCurve: 'P-256' };
const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 };

for (const [label, alg] of [
  ['ECDSA P-256', ECDSA],
  ['RSA', RSA],
] as const) {
  test(`a self-signed ${label} certificate reads as @peculiar/x509's does, and verifies with its own key`, async (t) => {
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    // Whole seconds: certificates hold times to the second.
    const params = {
      serialNumber: 'f1020304050607ff',
      name: NAME,
      notBefore: new Date(1_800_000_000_000),
      notAfter: new Date(2_115_000_000_000),
      signingAlgorithm: alg,
      keys,
    };
    const mine = new NodeCertificate((await X509CertificateGenerator.createSelfSigned(params)).toString('pem'));
    const theirs = new NodeCertificate((await peculiar.X509CertificateGenerator.createSelfSigned(params)).toString('pem'));
    for (const field of ['subject', 'issuer', 'serialNumber', 'validFrom', 'validTo'] as const) t.is(mine[field], theirs[field], field);
    t.true(mine.publicKey.equals(theirs.publicKey));
    t.true(mine.verify(mine.publicKey), 'signed by its own key');
    t.is(mine.validTo, 'Jan  8 04:00:00 2037 GMT');
    // werift's reading of it, with the package it would use.
    t.deepEqual(fidm.Certificate.fromPEM(Buffer.from(mine.toString())).raw, mine.raw);
  });
}

test('a date past 2049 is written as GeneralizedTime', async (t) => {
  const keys = (await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=x',
    notBefore: new Date('2049-12-31T23:59:59Z'),
    notAfter: new Date('2050-01-01T00:00:00Z'),
    signingAlgorithm: ECDSA,
    keys,
  });
  const read = new NodeCertificate(cert.toString('pem'));
  t.is(read.validFrom, 'Dec 31 23:59:59 2049 GMT');
  t.is(read.validTo, 'Jan  1 00:00:00 2050 GMT');
  t.true(cert.rawData.includes(Buffer.from('20500101000000Z')));
});

test('bad certificate parameters are refused, naming the field', async (t) => {
  const keys = (await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const base = { serialNumber: '01', name: 'CN=x', notBefore: new Date(), notAfter: new Date(), signingAlgorithm: ECDSA, keys };
  await t.throwsAsync(X509CertificateGenerator.createSelfSigned({ ...base, name: 'XX=y' }), { message: /attribute "XX"/ });
  await t.throwsAsync(X509CertificateGenerator.createSelfSigned({ ...base, serialNumber: 'zz' }), { message: /serialNumber "zz"/ });
  await t.throwsAsync(X509CertificateGenerator.createSelfSigned({ ...base, signingAlgorithm: { name: 'Ed25519', hash: 'SHA-256' } }), {
    message: /only ECDSA and RSASSA-PKCS1-v1_5/,
  });
});

test('PemConverter writes PEM as @peculiar/x509 does', (t) => {
  for (const size of [0, 1, 48, 49, 121, 1000]) {
    const bytes = randomBytes(size);
    t.is(PemConverter.encode(bytes, 'private key'), peculiar.PemConverter.encode(bytes, 'private key'), `${size} bytes`);
  }
});

test("the certificate and key readers give @fidm/x509's bytes, keys and verifiable signatures", async (t) => {
  const keys = (await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const certPem = (
    await X509CertificateGenerator.createSelfSigned({
      serialNumber: '0a',
      name: NAME,
      notBefore: new Date(),
      notAfter: new Date(Date.now() + 1e9),
      signingAlgorithm: ECDSA,
      keys,
    })
  ).toString('pem');
  const keyPem = PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'private key');
  const mine = Certificate.fromPEM(Buffer.from(certPem));
  const theirs = fidm.Certificate.fromPEM(Buffer.from(certPem));
  t.deepEqual(mine.raw, theirs.raw);
  t.true(createPublicKey(mine.publicKey.toPEM()).equals(createPublicKey(theirs.publicKey.toPEM())));
  const key = PrivateKey.fromPEM(Buffer.from(keyPem));
  t.is(key.toPEM().trim(), fidm.PrivateKey.fromPEM(Buffer.from(keyPem)).toPEM().trim());
  const data = randomBytes(100);
  const signature = key.sign(data, 'sha256');
  t.true(createVerify('sha256').update(data).verify(mine.publicKey.toPEM(), signature));
  t.true(theirs.publicKey.verify(data, signature, 'sha256'), '@fidm/x509 verifies it');
});

test("P-256 keys and shared secrets are @noble/curves' (the secret: the shared point's x)", (t) => {
  const a = p256.utils.randomPrivateKey();
  const b = noble.utils.randomPrivateKey();
  t.is(a.length, 32);
  for (const compressed of [true, false]) t.deepEqual(Buffer.from(p256.getPublicKey(b, compressed)), Buffer.from(noble.getPublicKey(b, compressed)));
  const fromMine = p256.sharedSecretX(a, noble.getPublicKey(b, false));
  const fromNoble = Buffer.from(noble.getSharedSecret(b, p256.getPublicKey(a, false))).subarray(1);
  t.deepEqual(fromMine, fromNoble);
  t.is(fromMine.length, 32);
});

test("X25519 key pairs and scalarMult are tweetnacl's", (t) => {
  const mine = nacl.box.keyPair();
  t.is(mine.secretKey.buffer.byteLength, 32, 'werift reads .buffer: it must hold the key alone');
  t.is(mine.publicKey.buffer.byteLength, 32);
  t.deepEqual(Buffer.from(mine.publicKey), Buffer.from(tweetnacl.scalarMult.base(mine.secretKey)));
  const theirs = tweetnacl.box.keyPair();
  t.deepEqual(Buffer.from(nacl.scalarMult(mine.secretKey, theirs.publicKey)), Buffer.from(tweetnacl.scalarMult(theirs.secretKey, mine.publicKey)));
  t.throws(() => nacl.scalarMult(mine.secretKey, new Uint8Array(31)), { message: /32 bytes/ });
  // A low-order point gives an all-zero secret, which OpenSSL refuses (tweetnacl would return it).
  t.throws(() => nacl.scalarMult(mine.secretKey, new Uint8Array(32)));
});

test('an X25519 pair from Node reads back through scalarMult', (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const d = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const x = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  t.deepEqual(Buffer.from(tweetnacl.scalarMult.base(d)), x);
});
