// Stands in for @peculiar/x509 in the micro-server's bundle (scripts/build-micro.mjs aliases it here).
// werift uses that package for one thing: the self-signed certificate of its DTLS endpoint
// (X509CertificateGenerator.createSelfSigned, then PemConverter.encode of the PKCS#8 key). The package
// brings ~400 KB of ASN.1 schemas, polyfills and a DI container into the file; Node 20 signs and exports
// keys itself, so only the certificate's DER needs writing, which this module does. The surface is the
// part werift calls, with the same names; anything else is absent on purpose.
import { createHash, KeyObject, sign, webcrypto } from 'node:crypto';

type Der = Buffer;

/** One DER element: tag, definite length, contents. */
function der(tag: number, ...contents: Buffer[]): Der {
  const body = Buffer.concat(contents);
  const n = body.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const sequence = (...items: Der[]) => der(0x30, ...items);
const set = (...items: Der[]) => der(0x31, ...items);

/** A non-negative INTEGER from its big-endian magnitude (a leading 0 keeps it positive). */
function unsignedInteger(magnitude: Buffer): Der {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const trimmed = magnitude.subarray(i);
  return der(0x02, trimmed[0] & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function oid(dotted: string): Der {
  const arcs = dotted.split('.').map(Number);
  const bytes = [40 * arcs[0] + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f));
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime for 1950-2049, GeneralizedTime otherwise (RFC 5280 4.1.2.5), to the second, in UTC. */
function time(date: Date): Der {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? der(0x17, Buffer.from(`${digits.slice(2)}Z`)) : der(0x18, Buffer.from(`${digits}Z`));
}

const ATTRIBUTES: Record<string, string> = { C: '2.5.4.6', ST: '2.5.4.8', L: '2.5.4.7', O: '2.5.4.10', OU: '2.5.4.11', CN: '2.5.4.3' };
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** A distinguished name written as `C=AU, ST=Some-State, O=...` (no escaped commas): an RDNSequence. */
function distinguishedName(name: string): Der {
  const rdns = name.split(',').map((part) => {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    const attribute = ATTRIBUTES[key];
    if (eq < 0 || !attribute)
      throw new Error(`certificate name ${JSON.stringify(name)}: attribute ${JSON.stringify(key)} is not one of ${Object.keys(ATTRIBUTES).join(', ')}`);
    // PrintableString when the value allows it, as OpenSSL and @peculiar/x509 write it; UTF8String otherwise.
    return set(sequence(oid(attribute), der(PRINTABLE.test(value) ? 0x13 : 0x0c, Buffer.from(value, 'utf8'))));
  });
  return sequence(...rdns);
}

interface SigningAlgorithm {
  name: string;
  hash: string | { name: string };
}

/** The AlgorithmIdentifier of the signature (RFC 5758 for ECDSA: no parameters; RFC 4055 for RSA: NULL). */
function signatureAlgorithm(alg: SigningAlgorithm): { identifier: Der; digest: string } {
  const hash = (typeof alg.hash === 'string' ? alg.hash : alg.hash.name).toUpperCase();
  const digest = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' }[hash];
  if (!digest) throw new Error(`certificate signing algorithm: hash ${JSON.stringify(hash)} is not SHA-256, SHA-384 or SHA-512`);
  if (alg.name === 'ECDSA') {
    const ids: Record<string, string> = { sha256: '1.2.840.10045.4.3.2', sha384: '1.2.840.10045.4.3.3', sha512: '1.2.840.10045.4.3.4' };
    return { identifier: sequence(oid(ids[digest])), digest };
  }
  if (alg.name === 'RSASSA-PKCS1-v1_5') {
    const ids: Record<string, string> = { sha256: '1.2.840.113549.1.1.11', sha384: '1.2.840.113549.1.1.12', sha512: '1.2.840.113549.1.1.13' };
    return { identifier: sequence(oid(ids[digest]), der(0x05)), digest };
  }
  throw new Error(`certificate signing algorithm ${JSON.stringify(alg.name)}: only ECDSA and RSASSA-PKCS1-v1_5 are supported`);
}

/** PEM text of DER bytes: 64 base64 characters a line, as RFC 7468 writes it. */
function pem(bytes: ArrayBuffer | Buffer, label: string): string {
  const lines =
    Buffer.from(bytes as ArrayBuffer)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`].join('\n');
}

export class X509Certificate {
  constructor(readonly rawData: Buffer) {}

  toString(format: 'pem' = 'pem'): string {
    if (format !== 'pem') throw new Error(`certificate format ${JSON.stringify(format)}: only pem`);
    return pem(this.rawData, 'CERTIFICATE');
  }

  /** The SHA-256 (or other) digest of the DER, as werift's fingerprints use it. */
  fingerprint(algorithm = 'sha256'): Buffer {
    return createHash(algorithm).update(this.rawData).digest();
  }
}

export interface SelfSignedParams {
  /** Hex digits of a positive serial number. */
  serialNumber: string;
  name: string;
  notBefore: Date;
  notAfter: Date;
  signingAlgorithm: SigningAlgorithm;
  keys: { privateKey: webcrypto.CryptoKey; publicKey: webcrypto.CryptoKey };
}

export const X509CertificateGenerator = {
  /** An X.509 v3 certificate, subject = issuer = `name`, signed by its own key; no extensions. */
  async createSelfSigned(params: SelfSignedParams): Promise<X509Certificate> {
    if (!/^[0-9a-f]+$/i.test(params.serialNumber)) throw new Error(`certificate serialNumber ${JSON.stringify(params.serialNumber)}: hex digits expected`);
    const { identifier, digest } = signatureAlgorithm(params.signingAlgorithm);
    const name = distinguishedName(params.name);
    const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', params.keys.publicKey));
    const tbs = sequence(
      der(0xa0, unsignedInteger(Buffer.from([2]))), // version: v3
      unsignedInteger(Buffer.from(params.serialNumber.length % 2 ? `0${params.serialNumber}` : params.serialNumber, 'hex')),
      identifier,
      name,
      sequence(time(params.notBefore), time(params.notAfter)),
      name,
      spki,
    );
    // Node signs with the CryptoKey's own key; ECDSA signatures in DER (Ecdsa-Sig-Value), as X.509 wants them.
    const signature = sign(digest, tbs, { key: KeyObject.from(params.keys.privateKey), dsaEncoding: 'der' });
    return new X509Certificate(sequence(tbs, identifier, der(0x03, Buffer.from([0]), signature)));
  },
};

export const PemConverter = {
  /** PEM of DER bytes; the label upper-cased, as @peculiar/x509 writes `private key` as PRIVATE KEY. */
  encode(bytes: ArrayBuffer | Buffer, label: string): string {
    return pem(bytes, label.toUpperCase());
  },
};

/** werift hands its WebCrypto to @peculiar/x509 here; Node's own is used above, so there is nothing to keep. */
export const cryptoProvider = {
  set(_provider: unknown): void {},
};
