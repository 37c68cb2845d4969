// Access tokens are JWTs (HS256) signed with a per-data-dir secret, so a token from one cloud is
// worthless at another and tokens survive a restart of the same cloud.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { TokenError } from '../errors/catalogue.js';
export { TokenError };

export type TokenSubjectKind = 'api-key' | 'part';

export interface TokenClaims {
  /** API key id or part id. */
  sub: string;
  kind: TokenSubjectKind;
  iat: number;
  exp: number;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export class TokenSigner {
  constructor(
    private readonly secret: Buffer,
    readonly ttlSeconds = 3600,
  ) {}

  /** Loads <data-dir>/token-secret, creating it (durably, mode 0600) on first use. */
  static forDataDir(dataDir: string, ttlSeconds?: number): TokenSigner {
    const path = join(dataDir, 'token-secret');
    if (!existsSync(path)) {
      mkdirSync(dataDir, { recursive: true });
      const temp = `${path}.tmp-${process.pid}`;
      writeFileSync(temp, randomBytes(32).toString('base64'), { mode: 0o600 });
      const fd = openSync(temp, 'r');
      fsyncSync(fd);
      closeSync(fd);
      renameSync(temp, path);
    }
    return new TokenSigner(Buffer.from(readFileSync(path, 'utf8'), 'base64'), ttlSeconds);
  }

  sign(sub: string, kind: TokenSubjectKind, now = Date.now()): string {
    const iat = Math.floor(now / 1000);
    const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, kind, iat, exp: iat + this.ttlSeconds })}`;
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** Returns the claims of a valid, unexpired token; throws TokenError naming what is wrong otherwise. */
  verify(token: string, now = Date.now()): TokenClaims {
    const parts = token.split('.');
    if (parts.length !== 3) throw new TokenError('access token is malformed');
    const [header, payload, signature] = parts;
    const expected = this.mac(`${header}.${payload}`);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new TokenError('access token signature is invalid');
    }
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      throw new TokenError('access token payload is malformed');
    }
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) throw new TokenError('access token has expired');
    if (typeof claims.sub !== 'string' || (claims.kind !== 'api-key' && claims.kind !== 'part')) {
      throw new TokenError('access token payload is malformed');
    }
    return claims;
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.secret).update(body).digest();
  }
}
