// The elliptic-curve key exchange of werift's DTLS, on Node's own crypto, for the micro-server's bundle
// (scripts/build-micro.mjs points `tweetnacl` and `@noble/curves/p256` here). werift does ECDHE with
// P-256 (through @noble/curves) or X25519 (through tweetnacl): pure-JavaScript curve code (~75 KB,
// tweetnacl twice) for what OpenSSL in Node 20 does natively. The names are the ones werift calls.
import { createECDH, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync } from 'node:crypto';

/** A copy with its own ArrayBuffer: werift reads `.buffer` of what it gets (a pooled Buffer would hand it the pool). */
const own = (bytes: Buffer) => new Uint8Array(bytes);

export const p256 = {
  utils: {
    /** A random private scalar in [1, n-1], 32 bytes big-endian. */
    randomPrivateKey(): Uint8Array {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      return own(ecdh.getPrivateKey());
    },
  },
  /** The public point of `privateKey`: 33 bytes compressed (the default), 65 uncompressed. */
  getPublicKey(privateKey: Uint8Array, isCompressed = true): Uint8Array {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(privateKey);
    return own(ecdh.getPublicKey(null, isCompressed ? 'compressed' : 'uncompressed') as Buffer);
  },
  /**
   * The x coordinate of the shared point (the ECDH premaster secret of TLS, RFC 8422 5.10). werift took it
   * from @noble/curves' getSharedSecret by dropping the point's first byte; the build points that call here.
   */
  sharedSecretX(privateKey: Uint8Array, publicKey: Uint8Array): Buffer {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(privateKey);
    return ecdh.computeSecret(publicKey);
  },
};

// The fixed DER prefixes of an X25519 key (RFC 8410): PKCS#8 before the private key, SPKI before the public.
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');

/** tweetnacl's scalarMult and box.keyPair, which is what werift uses of it: X25519 (RFC 7748). */
const nacl = {
  /** X25519(n, p): the shared secret of private key `n` and public key `p`, 32 bytes. Throws for a low-order `p`. */
  scalarMult(n: Uint8Array, p: Uint8Array): Uint8Array {
    if (n.length !== 32 || p.length !== 32) throw new Error(`X25519: keys are 32 bytes (got ${n.length} and ${p.length})`);
    const privateKey = createPrivateKey({ key: Buffer.concat([X25519_PKCS8, n]), format: 'der', type: 'pkcs8' });
    const publicKey = createPublicKey({ key: Buffer.concat([X25519_SPKI, p]), format: 'der', type: 'spki' });
    return own(diffieHellman({ privateKey, publicKey }));
  },
  box: {
    /** A fresh X25519 key pair, 32 bytes each. */
    keyPair(): { publicKey: Uint8Array; secretKey: Uint8Array } {
      const { privateKey, publicKey } = generateKeyPairSync('x25519');
      const jwk = privateKey.export({ format: 'jwk' });
      const pub = publicKey.export({ format: 'jwk' });
      return { secretKey: own(Buffer.from(jwk.d!, 'base64url')), publicKey: own(Buffer.from(pub.x!, 'base64url')) };
    },
  },
};

export default nacl;
