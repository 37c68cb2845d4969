// Stands in for @fidm/x509 in the micro-server's bundle (scripts/build-micro.mjs aliases it here). werift
// reads its own certificate and key back from PEM with that package: the certificate's DER (for the DTLS
// Certificate message and its fingerprint), its public key as PEM, the private key as PKCS#8 PEM, and
// signs the key exchange with it. Node 20's X509Certificate and KeyObject do all of that; the package
// would bring its own ASN.1 reader and a second copy of tweetnacl (~110 KB). Same names, the part werift calls.
import { createPrivateKey, createSign, X509Certificate, type KeyObject } from 'node:crypto';

export class PublicKey {
  constructor(private readonly key: KeyObject) {}

  /** SubjectPublicKeyInfo PEM. */
  toPEM(): string {
    return this.key.export({ type: 'spki', format: 'pem' }) as string;
  }
}

export class Certificate {
  /** The certificate's DER bytes. */
  readonly raw: Buffer;
  readonly publicKey: PublicKey;

  private constructor(certificate: X509Certificate) {
    this.raw = certificate.raw;
    this.publicKey = new PublicKey(certificate.publicKey);
  }

  static fromPEM(pem: Buffer | string): Certificate {
    return new Certificate(new X509Certificate(pem));
  }
}

export class PrivateKey {
  private constructor(private readonly key: KeyObject) {}

  static fromPEM(pem: Buffer | string): PrivateKey {
    return new PrivateKey(createPrivateKey(pem));
  }

  /** PKCS#8 PEM. */
  toPEM(): string {
    return this.key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }

  /** A signature of `data` with the digest named (`sha256`); ECDSA signatures in DER, as TLS carries them. */
  sign(data: Buffer, hashAlgorithm: string): Buffer {
    return createSign(hashAlgorithm).update(data).sign(this.key);
  }
}
