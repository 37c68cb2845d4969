// Access tokens are JWTs (HS256) signed with a per-cloud secret, so a token from one cloud is
// worthless at another and tokens survive a restart of the same cloud. The embedded default keeps the
// secret in <data-dir>/token-secret (forDataDir); the scale-out mode keeps it in PostgreSQL (forStore),
// so that a token signed by one process verifies on every other process of the cloud.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { TokenError } from '../errors/catalogue.js';
import type { TabularStore } from '../store/tabular.js';
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

  /**
   * Loads the cloud's secret from the store's cloud_secrets table (PostgreSQL, pg-schema.ts), creating
   * it on first use. Processes that start together each offer a new secret; ON CONFLICT DO NOTHING
   * keeps the first one committed, and every process then reads that one.
   */
  static async forStore(store: TabularStore, ttlSeconds?: number): Promise<TokenSigner> {
    if (store.dialect !== 'postgres') throw new Error('TokenSigner.forStore: the token secret is kept in PostgreSQL; the embedded store uses forDataDir');
    await store.execute(`INSERT INTO cloud_secrets VALUES ('token-secret', ?, ?) ON CONFLICT (name) DO NOTHING`, [
      randomBytes(32).toString('base64'),
      new Date(),
    ]);
    const [row] = await store.query(`SELECT value FROM cloud_secrets WHERE name = 'token-secret'`);
    const secret = Buffer.from(String(row.value), 'base64');
    if (secret.length < 32) throw new Error('the token secret in cloud_secrets is shorter than 32 bytes: the table was edited by hand');
    return new TokenSigner(secret, ttlSeconds);
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
